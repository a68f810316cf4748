/** Secrets: the list (for pickers) and create. The value is write-only; it is never read back. */
import { useMutation, useQuery } from "@tanstack/react-query"
import { call } from "./client.js"
import type { NamespaceId } from "./ids.js"
import { keys } from "./keys.js"
import { queryClient } from "./queryClient.js"

export const useSecrets = (ns: string) =>
  useQuery({ queryKey: keys.secrets(ns), queryFn: () => call((c) => c.secrets.list({ path: { namespaceId: ns as NamespaceId }, urlParams: {} })) })

export const useCreateSecret = (ns: string) =>
  useMutation({
    mutationFn: (payload: { name: string; value: string }) => call((c) => c.secrets.create({ path: { namespaceId: ns as NamespaceId }, payload })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: keys.secrets(ns) })
  })
