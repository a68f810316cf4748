/** Configurations: the list (for pickers) and create from a JSON `values` document. */
import { useMutation, useQuery } from "@tanstack/react-query"
import { call } from "./client.js"
import type { NamespaceId } from "./ids.js"
import { keys } from "./keys.js"
import { queryClient } from "./queryClient.js"

export const useConfigurations = (ns: string) =>
  useQuery({
    queryKey: keys.configurations(ns),
    queryFn: () => call((c) => c.configurations.list({ path: { namespaceId: ns as NamespaceId }, urlParams: {} }))
  })

export const useCreateConfiguration = (ns: string) =>
  useMutation({
    mutationFn: (values: { readonly [key: string]: unknown }) =>
      call((c) => c.configurations.create({ path: { namespaceId: ns as NamespaceId }, payload: { kind: "agent", values } })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: keys.configurations(ns) })
  })
