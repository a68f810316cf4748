/** Configurations: the list (for pickers). Create and delete: `resources/configurations.ts`. */
import { useQuery } from "@tanstack/react-query"
import { call } from "./client.js"
import type { NamespaceId } from "./ids.js"
import { keys } from "./keys.js"

export const useConfigurations = (ns: string) =>
  useQuery({
    queryKey: keys.configurations(ns),
    queryFn: () => call((c) => c.configurations.list({ path: { namespaceId: ns as NamespaceId }, urlParams: {} }))
  })
