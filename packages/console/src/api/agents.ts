/** Agents (SPEC 4.4): list, read, create, deploy, stop, delete, revisions, diagnostics. */
import type { CreateAgent } from "@svc/core/api"
import { useMutation, useQuery } from "@tanstack/react-query"
import { call } from "./client.js"
import type { AgentId, NamespaceId, RevisionId } from "./ids.js"
import { keys } from "./keys.js"
import { queryClient } from "./queryClient.js"

const path = (ns: string, agentId: string) => ({ namespaceId: ns as NamespaceId, agentId: agentId as AgentId })

export const useAgents = (ns: string) =>
  useQuery({
    queryKey: keys.agents(ns),
    queryFn: () => call((c) => c.agents.list({ path: { namespaceId: ns as NamespaceId }, urlParams: {} })),
    refetchInterval: (query) => query.state.data?.some((agent) => agent.status === "deleting") === true ? 2_000 : false
  })

export const useAgent = (ns: string, agentId: string) =>
  useQuery({
    queryKey: keys.agent(ns, agentId),
    queryFn: () => call((c) => c.agents.get({ path: path(ns, agentId) })),
    // A deleting Agent disappears when its teardown completes: keep looking until then.
    refetchInterval: (query) => query.state.data?.status === "deleting" ? 2_000 : false
  })

export const useRevisions = (ns: string, agentId: string) =>
  useQuery({ queryKey: keys.revisions(ns, agentId), queryFn: () => call((c) => c.agents.revisions({ path: path(ns, agentId), urlParams: {} })) })

/** The Agent itself only: its key prefixes its files, deployments and permissions. */
const refreshAgent = (ns: string, agentId: string) =>
  queryClient.invalidateQueries({ queryKey: keys.agent(ns, agentId), exact: true })

export const useCreateAgent = (ns: string) =>
  useMutation({
    mutationFn: (payload: CreateAgent) => call((c) => c.agents.create({ path: { namespaceId: ns as NamespaceId }, payload })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: keys.agents(ns), exact: true })
  })

export const useDeploy = (ns: string, agentId: string) =>
  useMutation({
    mutationFn: () => call((c) => c.agents.deploy({ path: path(ns, agentId) })),
    onSuccess: () => Promise.all([refreshAgent(ns, agentId), queryClient.invalidateQueries({ queryKey: keys.revisions(ns, agentId), exact: true })])
  })

export const useStop = (ns: string, agentId: string) =>
  useMutation({ mutationFn: () => call((c) => c.agents.stop({ path: path(ns, agentId) })), onSuccess: () => refreshAgent(ns, agentId) })

export const useDeleteAgent = (ns: string, agentId: string) =>
  useMutation({
    mutationFn: () => call((c) => c.agents.delete({ path: path(ns, agentId) })),
    onSuccess: () => Promise.all([refreshAgent(ns, agentId), queryClient.invalidateQueries({ queryKey: keys.agents(ns), exact: true })])
  })

export const useDiagnostics = (ns: string, agentId: string) =>
  useMutation({
    mutationFn: (revisionId: string) =>
      call((c) => c.agents.diagnostics({ path: { ...path(ns, agentId), deploymentId: revisionId as RevisionId } }))
  })
