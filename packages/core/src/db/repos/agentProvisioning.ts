/**
 * The `agent_provisioning` table (SPEC 2.13; docs/decisions/agent-provisioning.md): the record
 * the API admits and the worker carries out, phase by phase, each phase recording what it created
 * in the same transaction.
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import type { Statement } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Schema } from "effect"
import type { ParseError } from "effect/ParseResult"
import { AgentId, ConfigurationId, NamespaceId, RequestId, WorkId } from "../../schema/ids.js"
import { AGENT_PROVISION, ProvisioningPhases } from "../../tenancy/agents.js"

export const ProvisioningRow = Schema.Struct({
  id: WorkId,
  namespace_id: NamespaceId,
  request_id: RequestId,
  body_digest: Schema.String,
  initiator_principal_id: Schema.String,
  /** The resolved request (`AgentProvisionRequest`), decoded by each phase that needs it; null once complete. */
  request: Schema.Unknown,
  phase: Schema.Literal(...ProvisioningPhases),
  agent_id: Schema.NullOr(AgentId),
  configuration_id: Schema.NullOr(ConfigurationId),
  completed_at: Schema.NullOr(Schema.DateFromSelf),
  created_at: Schema.DateFromSelf,
  updated_at: Schema.DateFromSelf
})
export type ProvisioningRow = typeof ProvisioningRow.Type

/**
 * A DELETE's referrer query arm (`referrer` column): admitted provisioning in the Namespace that
 * still `needs` (a condition over the record `p`) what is being deleted and has yet to create
 * its Agent while its `agent.provision` work is queued or running. Failed work holds nothing:
 * it only ends, and a retry then finds the resource gone. Run the query after the deleted row's
 * lock: the next phase's foreign key waits for it.
 */
export const pendingProvisioningReferrer = (sql: SqlClient.SqlClient, namespaceId: string, needs: Statement.Fragment) => sql`
  SELECT 'Agent provisioning ' || p.id AS referrer FROM agent_provisioning p
  WHERE p.namespace_id = ${namespaceId} AND p.agent_id IS NULL AND ${needs}
    AND EXISTS (SELECT 1 FROM work_items w WHERE w.kind = ${AGENT_PROVISION} AND w.key = p.id AND w.state IN ('queued', 'running'))
`

const InsertProvisioning = Schema.Struct({
  id: WorkId,
  namespace_id: NamespaceId,
  request_id: RequestId,
  body_digest: Schema.String,
  initiator_principal_id: Schema.String,
  request: Schema.Unknown
})
const FindRecord = Schema.Struct({ namespace_id: NamespaceId, id: Schema.optional(WorkId), request_id: Schema.optional(RequestId) })

export class ProvisioningRepo extends Effect.Service<ProvisioningRepo>()("@svc/core/ProvisioningRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const columns = sql.literal(`p.id, p.namespace_id, p.request_id, p.body_digest, p.initiator_principal_id, p.request, p.phase,
  p.agent_id, p.configuration_id, p.completed_at, p.created_at, p.updated_at`)

    /** The record under its live Namespace, by id or by the client's request id. */
    const findLive = SqlSchema.findOne({
      Request: FindRecord,
      Result: ProvisioningRow,
      execute: (key) => sql`
        SELECT ${columns}
        FROM agent_provisioning p JOIN namespaces n ON n.id = p.namespace_id
        WHERE p.namespace_id = ${key.namespace_id} AND n.status <> 'deleted'
          AND ${key.id !== undefined ? sql`p.id = ${key.id}` : sql`p.request_id = ${key.request_id ?? null}`}
      `
    })

    /** None when the request id was admitted concurrently: the first record answers. */
    const insert = SqlSchema.findOne({
      Request: InsertProvisioning,
      Result: ProvisioningRow,
      execute: (row) => sql`
        INSERT INTO agent_provisioning AS p (id, namespace_id, request_id, body_digest, initiator_principal_id, request)
        VALUES (${row.id}, ${row.namespace_id}, ${row.request_id}, ${row.body_digest}, ${row.initiator_principal_id},
          ${JSON.stringify(row.request)}::jsonb)
        ON CONFLICT (namespace_id, request_id) DO NOTHING
        RETURNING ${columns}
      `
    })

    const touch = SqlSchema.void({
      Request: WorkId,
      execute: (id) => sql`UPDATE agent_provisioning SET updated_at = now() WHERE id = ${id}`
    })

    /** The record, locked for the worker's phase transaction. */
    const lock = SqlSchema.findOne({
      Request: WorkId,
      Result: ProvisioningRow,
      execute: (id) => sql`SELECT ${columns} FROM agent_provisioning p WHERE p.id = ${id} FOR UPDATE`
    })

    const start = SqlSchema.void({
      Request: WorkId,
      execute: (id) => sql`
        UPDATE agent_provisioning SET phase = 'configuration', updated_at = now() WHERE id = ${id} AND phase = 'admitted'
      `
    })

    const configurationCreated = SqlSchema.void({
      Request: Schema.Struct({ id: WorkId, configuration_id: ConfigurationId }),
      execute: (req) => sql`
        UPDATE agent_provisioning SET configuration_id = ${req.configuration_id}, phase = 'transport', updated_at = now() WHERE id = ${req.id}
      `
    })

    const agentCreated = SqlSchema.void({
      Request: Schema.Struct({ id: WorkId, agent_id: AgentId }),
      execute: (req) => sql`
        UPDATE agent_provisioning SET agent_id = ${req.agent_id}, phase = 'handoff', updated_at = now() WHERE id = ${req.id}
      `
    })

    /** Complete: the stored request is dropped (it is no longer needed once the Agent exists). */
    const complete = SqlSchema.void({
      Request: WorkId,
      execute: (id) => sql`UPDATE agent_provisioning SET completed_at = now(), request = NULL, updated_at = now() WHERE id = ${id}`
    })

    /** A row of another shape is a defect; the SqlError stays for the worker to retry. */
    const dieOnParse = <A, R>(effect: Effect.Effect<A, SqlError | ParseError, R>) => Effect.catchTag(effect, "ParseError", Effect.die)
    return {
      findLive: (namespaceId: NamespaceId, id: WorkId) => findLive({ namespace_id: namespaceId, id }).pipe(Effect.orDie),
      findByRequest: (namespaceId: NamespaceId, requestId: RequestId) =>
        findLive({ namespace_id: namespaceId, request_id: requestId }).pipe(Effect.orDie),
      insert: (row: typeof InsertProvisioning.Type) => insert(row).pipe(Effect.orDie),
      touch: (id: WorkId) => touch(id).pipe(Effect.orDie),
      /** The worker's phases keep the SqlError: a lost database is a retryable work failure there. */
      lock: (id: WorkId) => lock(id).pipe(dieOnParse),
      start: (id: WorkId) => start(id).pipe(dieOnParse),
      configurationCreated: (id: WorkId, configurationId: ConfigurationId) =>
        configurationCreated({ id, configuration_id: configurationId }).pipe(dieOnParse),
      agentCreated: (id: WorkId, agentId: AgentId) => agentCreated({ id, agent_id: agentId }).pipe(dieOnParse),
      complete: (id: WorkId) => complete(id).pipe(dieOnParse)
    }
  })
}) {}
