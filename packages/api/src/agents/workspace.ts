/**
 * Workspace files (SPEC 4.4): the four files an Agent's gateway reads, through the Compute
 * Driver. Reads need Agent `read`; writes need Agent `operate`, an active revision and a
 * reachable gateway, and are audited. A write whose outcome or audit cannot be confirmed is
 * `503 UNKNOWN_OUTCOME` (rule 5: read the file before writing again).
 */
import { SqlClient } from "@effect/sql"
import { AuditLog } from "@svc/core/audit"
import { ComputeDriver, type ComputeFailure, GatewayCodes } from "@svc/core/drivers/compute"
import { AgentDeleting, DependencyUnavailable, NotFound, ResourceConflict, UnknownOutcome } from "@svc/core/errors"
import { CurrentCaller } from "@svc/core/iam"
import type { AgentId, NamespaceId } from "@svc/core/schema"
import { Effect } from "effect"
import { Authorization } from "../auth/authorize.js"
import { AgentLookup } from "./lookup.js"
import { agentRef } from "./policy.js"
import { exportedFn } from "@svc/core/observability"

export const WORKSPACE_FILES = ["AGENTS.md", "SOUL.md", "IDENTITY.md", "USER.md"] as const
export type WorkspaceFileName = (typeof WORKSPACE_FILES)[number]

const fileMissing = () => new NotFound({ message: "The workspace file does not exist." })
const workspaceUnavailable = () => new DependencyUnavailable({ message: "The Agent's workspace is unavailable; retry later." })

const gatewayRef = (namespaceId: NamespaceId, agentId: AgentId, revisionId: string | null) =>
  ({ namespaceId, agentId, revisionId: revisionId ?? "none" })

export class Workspace extends Effect.Service<Workspace>()("@svc/api/AgentWorkspace", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const lookup = yield* AgentLookup
    const driver = yield* ComputeDriver
    const records = yield* AuditLog
    const { authorize } = yield* Authorization

    const read = exportedFn("Agents.readWorkspaceFile")(function* (
      namespaceId: NamespaceId,
      agentId: AgentId,
      name: WorkspaceFileName
    ) {
      yield* authorize("agent:read", agentRef(namespaceId, agentId))
      const agent = yield* lookup.require(namespaceId, agentId, false)
      const bytes = yield* driver.readWorkspaceFile(gatewayRef(namespaceId, agentId, agent.active_revision_id), name).pipe(
        Effect.catchAll((error): Effect.Effect<never, NotFound | DependencyUnavailable> => {
          if (error._tag === "ComputeFailure" && error.code === GatewayCodes.WORKSPACE_FILE_NOT_FOUND) return Effect.fail(fileMissing())
          // Never deployed on this host: there is no workspace, so no file.
          if (error._tag === "ComputeFailure" && error.code === GatewayCodes.GATEWAY_NOT_RUNNING && agent.active_revision_id === null) {
            return Effect.fail(fileMissing())
          }
          return Effect.zipRight(Effect.logWarning("workspace read failed", { agentId, name, error: error._tag }), Effect.fail(workspaceUnavailable()))
        })
      )
      return { name, content: new TextDecoder().decode(bytes) }
    })

    const write = exportedFn("Agents.writeWorkspaceFile")(function* (
      namespaceId: NamespaceId,
      agentId: AgentId,
      name: WorkspaceFileName,
      content: string
    ) {
      const caller = yield* CurrentCaller
      yield* authorize("agent:operate", agentRef(namespaceId, agentId))
      const agent = yield* lookup.require(namespaceId, agentId, false)
      if (agent.status === "deleting") return yield* new AgentDeleting({ message: "The Agent is being deleted." })
      if (agent.active_revision_id === null) {
        return yield* new ResourceConflict({ message: "The Agent has no active revision; deploy it before writing workspace files." })
      }
      // SPEC 7.3: stopping (desired stopped, execution not yet removed) accepts no workspace writes.
      if (agent.desired_runtime_state === "stopped") {
        return yield* new ResourceConflict({ message: "The Agent is stopping and cannot accept workspace writes." })
      }
      const ref = gatewayRef(namespaceId, agentId, agent.active_revision_id)
      const health = yield* driver.gatewayHealth(ref).pipe(Effect.orElseSucceed(() => "absent" as const))
      if (health !== "healthy") return yield* workspaceUnavailable()
      const bytes = new TextEncoder().encode(content)
      const audit = (outcome: "success" | "failure") =>
        records.record({
          kind: "agent.workspace-file-written",
          outcome,
          actorPrincipalId: caller.principalId,
          namespaceId,
          resource: { kind: "agent", id: agentId },
          details: { name, size: bytes.length, revisionId: agent.active_revision_id }
        })
      const written = yield* driver.writeWorkspaceFile(ref, name, bytes).pipe(Effect.either)
      if (written._tag === "Left") {
        const error = written.left
        yield* Effect.logWarning("workspace write failed", { agentId, name, error: error._tag })
        // A refusal before any byte was written is a known outcome; anything else is not.
        const known = error._tag === "ComputeFailure" && (error as ComputeFailure).permanent
        yield* audit("failure").pipe(Effect.ignore)
        return yield* (known
          ? workspaceUnavailable()
          : new UnknownOutcome({ message: "The workspace write could not be confirmed; read the file before writing again." }))
      }
      yield* sql.withTransaction(audit("success")).pipe(
        Effect.catchAll(() => new UnknownOutcome({ message: "The workspace write's audit could not be confirmed; read the file before writing again." }))
      )
      return { name, size: bytes.length }
    })

    return { read, write }
  }),
  dependencies: [AgentLookup.Default, AuditLog.Default, Authorization.Default]
}) {}
