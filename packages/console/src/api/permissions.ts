/**
 * What the caller may do, asked of the service's permission probes (never guessed from role
 * names). An action is offered only once the probe says it is held: while the probe loads, or
 * when it is refused (403/404), nothing that writes is shown.
 */
import { useQuery } from "@tanstack/react-query"
import { call } from "./client.js"
import type { AgentId, NamespaceId } from "./ids.js"
import { keys } from "./keys.js"

export interface Can {
  (permission: string): boolean
  /** The probe has not answered yet (nothing is offered meanwhile). */
  readonly pending: boolean
}

const held = (query: { data?: { permissions: ReadonlyArray<string> } | undefined; isPending: boolean }): Can =>
  Object.assign((permission: string) => query.data?.permissions.includes(permission) === true, { pending: query.isPending })

export const useInstallationPermissions = () => {
  const query = useQuery({ queryKey: keys.permissions(), queryFn: () => call((c) => c.permissions.installation()) })
  return held(query)
}

export const useNamespacePermissions = (ns: string) => {
  const query = useQuery({
    queryKey: keys.permissions(ns),
    queryFn: () => call((c) => c.permissions.namespace({ path: { namespaceId: ns as NamespaceId } }))
  })
  return held(query)
}

export const useAgentPermissions = (ns: string, agentId: string) => {
  const query = useQuery({
    queryKey: keys.permissions(ns, agentId),
    queryFn: () => call((c) => c.permissions.agent({ path: { namespaceId: ns as NamespaceId, agentId: agentId as AgentId } }))
  })
  return held(query)
}
