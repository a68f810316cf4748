/**
 * Live status of one deployment (SPEC 2.7). The only place that knows how it is watched: today
 * a poll of `GET .../deployments/{id}` every second until the status is terminal; an SSE
 * endpoint can replace the poll here without any page changing.
 */
import { useQuery } from "@tanstack/react-query"
import { call } from "./client.js"
import type { AgentId, NamespaceId, RevisionId } from "./ids.js"
import { keys } from "./keys.js"
import { queryClient } from "./queryClient.js"

export const isTerminal = (status: string | undefined) => status === "succeeded" || status === "failed"

export const useDeploymentStatus = (ns: string, agentId: string, deploymentId: string | undefined) =>
  useQuery({
    queryKey: keys.deployment(ns, agentId, deploymentId ?? "none"),
    enabled: deploymentId !== undefined,
    queryFn: async () => {
      const status = await call((c) => c.agents.deployment({
        path: { namespaceId: ns as NamespaceId, agentId: agentId as AgentId, deploymentId: deploymentId as RevisionId }
      }))
      // The Agent's active revision changes when a deployment ends: read it again then.
      // Exact keys: the Agent's key prefixes this very query, whose refetch would invalidate again.
      if (isTerminal(status.status)) {
        void queryClient.invalidateQueries({ queryKey: keys.agent(ns, agentId), exact: true })
        void queryClient.invalidateQueries({ queryKey: keys.revisions(ns, agentId), exact: true })
      }
      return status
    },
    refetchInterval: (query) => isTerminal(query.state.data?.status) ? false : 1_000,
    staleTime: 0
  })
