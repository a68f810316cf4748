/**
 * Workspace files of an Agent (SPEC 4.4). After `503 UNKNOWN_OUTCOME` a write may or may not
 * have landed (rule 5): the file is read again before anything else, and the editor shows what
 * is there now; it never writes again on its own.
 */
import { useMutation, useQuery } from "@tanstack/react-query"
import { ApiFailure, call } from "./client.js"
import type { AgentId, NamespaceId } from "./ids.js"
import { keys } from "./keys.js"
import { queryClient } from "./queryClient.js"

export const WORKSPACE_FILES = ["AGENTS.md", "SOUL.md", "IDENTITY.md", "USER.md"] as const
export type WorkspaceFileName = (typeof WORKSPACE_FILES)[number]

const path = (ns: string, agentId: string, name: WorkspaceFileName) =>
  ({ namespaceId: ns as NamespaceId, agentId: agentId as AgentId, name })

export const useWorkspaceFile = (ns: string, agentId: string, name: WorkspaceFileName, enabled: boolean) =>
  useQuery({
    queryKey: keys.workspaceFile(ns, agentId, name),
    queryFn: () => call((c) => c.agents.readWorkspaceFile({ path: path(ns, agentId, name) })),
    enabled,
    staleTime: 0
  })

export const isUnknownOutcome = (error: unknown) => error instanceof ApiFailure && error.code === "UNKNOWN_OUTCOME"

export const useWriteWorkspaceFile = (ns: string, agentId: string, name: WorkspaceFileName) =>
  useMutation({
    mutationFn: (content: string) => call((c) => c.agents.writeWorkspaceFile({ path: path(ns, agentId, name), payload: { content } })),
    onSettled: (_data, error) =>
      // Success: the saved text is the file. Unknown outcome: only a read can say what is there.
      error === null || isUnknownOutcome(error) ? queryClient.invalidateQueries({ queryKey: keys.workspaceFile(ns, agentId, name) }) : undefined
  })
