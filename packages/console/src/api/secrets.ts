/** Secrets: the list (for pickers). Create, replace and delete: `resources/secrets.ts`. */
import { useQuery } from "@tanstack/react-query"
import { call } from "./client.js"
import type { NamespaceId } from "./ids.js"
import { keys } from "./keys.js"

export const useSecrets = (ns: string) =>
  useQuery({ queryKey: keys.secrets(ns), queryFn: () => call((c) => c.secrets.list({ path: { namespaceId: ns as NamespaceId }, urlParams: {} })) })
