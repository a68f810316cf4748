/**
 * `agent.provision` (SPEC 2.13, 3): carries out an admitted provisioning record, keyed by its
 * work id, in three phases, each one transaction holding the record's row lock:
 * - `configuration`: create the Configuration and record its id on the record;
 * - `transport`: create the Agent and its own principal (exactly as `POST .../agents` does:
 *   `insertAgent`) and record its id;
 * - `handoff`: mark the record complete and drop the stored request. The Agent stays desired
 *   `stopped`: provisioning never deploys.
 * Each phase writes what it creates and the id that proves it in the same transaction, so a crash
 * at any point resumes at the first phase not yet recorded and never creates anything twice. The
 * caller's grants were checked at admission (and again by a retry); the worker does not act for
 * anyone else.
 */
import { SqlClient } from "@effect/sql"
import { recordAudit } from "@svc/core/audit"
import {
  AgentsRepo,
  CredentialSourcesRepo,
  isForeignKeyViolation,
  isUniqueViolation,
  NamespacesRepo,
  ProvisioningRepo,
  type ProvisioningRow,
  ServiceAccountsRepo
} from "@svc/core/db"
import { AgentId, ConfigurationId, ServicePrincipalId, type WorkId } from "@svc/core/schema"
import { AGENT_PROVISION, AgentProvisionPayload, AgentProvisionRequest, insertAgent, insertConfiguration } from "@svc/core/tenancy"
import { Effect, Layer, Option, Schema } from "effect"
import type { SqlError } from "@effect/sql/SqlError"
import * as WorkHandler from "../engine/handler.js"
import { WorkFailure } from "../engine/failure.js"
import { lockBoundCredential } from "./provisionReferences.js"
import { databaseFailure } from "./revisionGateway.js"
import { exportedFn } from "@svc/core/observability"

export const ProvisionWorkCodes = {
  RESOURCE_CONFLICT: "RESOURCE_CONFLICT",
  NOT_FOUND: "NOT_FOUND",
  INVALID_PAYLOAD: "INVALID_PAYLOAD"
} as const

const permanent = (code: keyof typeof ProvisionWorkCodes, message: string) =>
  new WorkFailure({ code: ProvisionWorkCodes[code], message, permanent: true })

const nameTaken = () => permanent("RESOURCE_CONFLICT", "An Agent with this name already exists in the Namespace.")

/** What a phase reads and writes; provided by each entry point, so callers need only an SqlClient. */
const ProvisionRepos = Layer.mergeAll(
  ProvisioningRepo.Default,
  AgentsRepo.Default,
  NamespacesRepo.Default,
  CredentialSourcesRepo.Default,
  ServiceAccountsRepo.Default
)

const decodeRequest = Schema.decodeUnknownOption(AgentProvisionRequest)

const storedRequest = (row: ProvisioningRow) =>
  Option.match(decodeRequest(row.request), {
    onNone: () => Effect.fail(permanent("INVALID_PAYLOAD", "The provisioning record's request is unreadable.")),
    onSome: Effect.succeed
  })

/** What a failed statement means for the record: permanent for a taken name or a vanished reference. */
const statementFailure = (error: SqlError) =>
  isUniqueViolation(error)
    ? Effect.fail(nameTaken())
    : isForeignKeyViolation(error)
    ? Effect.fail(permanent("NOT_FOUND", "A Secret or the Configuration the request uses no longer exists in the Namespace."))
    : databaseFailure(error)

/** The next phase of the record, in one transaction: "done" once it is complete. */
export const provisionStep = (workId: WorkId): Effect.Effect<"continue" | "done", WorkFailure, SqlClient.SqlClient> =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const records = yield* ProvisioningRepo
    const agents = yield* AgentsRepo
    const namespaces = yield* NamespacesRepo
    const step = Effect.gen(function* () {
      const found = yield* records.lock(workId)
      if (Option.isNone(found)) return yield* permanent("NOT_FOUND", "The provisioning record no longer exists.")
      const row = found.value
      if (row.completed_at !== null) return "done" as const
      const namespaceId = row.namespace_id
      // FOR SHARE orders this write against DELETE /namespaces, like every writer into a Namespace.
      const status = Option.getOrUndefined(yield* namespaces.lockForShareRetryable(namespaceId))?.status
      if (status !== "provisioning" && status !== "ready") {
        return yield* permanent("RESOURCE_CONFLICT", "The Namespace can no longer accept new Agents.")
      }
      const context = { actorPrincipalId: row.initiator_principal_id, auditDetails: { provisioningId: workId } }
      if (row.configuration_id === null) {
        const request = yield* storedRequest(row)
        const configurationId = ConfigurationId.make()
        yield* insertConfiguration({ id: configurationId, namespaceId, ...request.configuration }, context)
        yield* records.configurationCreated(workId, configurationId)
        return "continue" as const
      }
      if (row.agent_id === null) {
        const request = yield* storedRequest(row)
        if (yield* agents.nameTaken({ namespace_id: namespaceId, name: request.agent.name })) return yield* nameTaken()
        yield* lockBoundCredential(namespaceId, request.agent.settings)
        const agentId = AgentId.make()
        yield* insertAgent(
          {
            id: agentId,
            servicePrincipalId: ServicePrincipalId.make(),
            namespaceId,
            configurationId: row.configuration_id,
            ...request.agent
          },
          context
        )
        yield* records.agentCreated(workId, agentId)
        return "continue" as const
      }
      yield* records.complete(workId)
      yield* recordAudit({
        kind: "agent.provisioned",
        outcome: "success",
        actorPrincipalId: row.initiator_principal_id,
        namespaceId,
        resource: { kind: "provisioning", id: workId },
        details: { agentId: row.agent_id, configurationId: row.configuration_id }
      })
      return "done" as const
    })
    return yield* sql.withTransaction(step).pipe(Effect.catchTag("SqlError", statementFailure))
  }).pipe(Effect.provide(ProvisionRepos))

/** `agent.provision`: every remaining phase, in order. */
export const provisionAgent = exportedFn("Agents.provision")(function* (payload: typeof AgentProvisionPayload.Type) {
  const records = yield* ProvisioningRepo
  yield* records.start(payload.workId).pipe(Effect.catchTag("SqlError", databaseFailure))
  while ((yield* provisionStep(payload.workId)) === "continue") {
    // The next phase.
  }
}, Effect.provide(ProvisionRepos))

export const AgentProvisionLive = WorkHandler.layer(AGENT_PROVISION, AgentProvisionPayload, provisionAgent)
