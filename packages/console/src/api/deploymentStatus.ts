/**
 * Live status of one deployment (SPEC 2.7). The only place that knows how it is watched: the
 * deployment's event stream (`GET .../deployments/{id}/events`, pushed by the worker's NOTIFY)
 * writes each status into the query cache; while no stream is open (before its first event,
 * or after it failed or ended early) the query polls `GET .../deployments/{id}` every second
 * until the status is terminal.
 */
import { FetchHttpClient } from "@effect/platform"
import { useQuery } from "@tanstack/react-query"
import { Credentials, watchDeploymentEvents } from "@svc/core/client"
import type { DeploymentStatus } from "@svc/core/api"
import { Effect, Fiber, Stream } from "effect"
import { useEffect, useState } from "react"
import { call } from "./client.js"
import type { AgentId, NamespaceId, RevisionId } from "./ids.js"
import { keys } from "./keys.js"
import { queryClient } from "./queryClient.js"

export const isTerminal = (status: string | undefined) => status === "succeeded" || status === "failed"

/** The Agent's active revision changes when a deployment ends: read it and its revisions again. */
const afterTerminal = (ns: string, agentId: string) => {
  // Exact keys: the Agent's key prefixes the status query, whose refetch would invalidate again.
  void queryClient.invalidateQueries({ queryKey: keys.agent(ns, agentId), exact: true })
  void queryClient.invalidateQueries({ queryKey: keys.revisions(ns, agentId), exact: true })
}

/** Follows the event stream while mounted; `true` once it delivered a status and is still open. */
const useEventStream = (ns: string, agentId: string, deploymentId: string | undefined) => {
  const [streaming, setStreaming] = useState(false)
  useEffect(() => {
    if (deploymentId === undefined) return
    const ref = { namespaceId: ns as NamespaceId, agentId: agentId as AgentId, deploymentId: deploymentId as RevisionId }
    const key = keys.deployment(ns, agentId, deploymentId)
    const onStatus = (status: DeploymentStatus) =>
      Effect.sync(() => {
        setStreaming(true)
        queryClient.setQueryData(key, status)
        if (isTerminal(status.status)) afterTerminal(ns, agentId)
      })
    const fiber = Effect.runFork(
      watchDeploymentEvents({ baseUrl: location.origin, credentials: Credentials.browser() }, ref).pipe(
        Stream.runForEach(onStatus),
        Effect.provide(FetchHttpClient.layer),
        // A stream that cannot be opened or breaks leaves the status to the poll.
        Effect.ignore,
        Effect.ensuring(Effect.sync(() => setStreaming(false)))
      )
    )
    return () => {
      Effect.runFork(Fiber.interrupt(fiber))
    }
  }, [ns, agentId, deploymentId])
  return streaming
}

export const useDeploymentStatus = (ns: string, agentId: string, deploymentId: string | undefined) => {
  const streaming = useEventStream(ns, agentId, deploymentId)
  return useQuery({
    queryKey: keys.deployment(ns, agentId, deploymentId ?? "none"),
    enabled: deploymentId !== undefined,
    queryFn: async () => {
      const status = await call((c) => c.agents.deployment({
        path: { namespaceId: ns as NamespaceId, agentId: agentId as AgentId, deploymentId: deploymentId as RevisionId }
      }))
      if (isTerminal(status.status)) afterTerminal(ns, agentId)
      return status
    },
    refetchInterval: (query) => (isTerminal(query.state.data?.status) || streaming ? false : 1_000),
    staleTime: 0
  })
}
