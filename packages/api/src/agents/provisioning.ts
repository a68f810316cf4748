/**
 * Agent provisioning (SPEC 2.13, 3, 4.4; docs/decisions/agent-provisioning.md): admission
 * records the request and queues `agent.provision` in one transaction; the worker creates the
 * Configuration, then the Agent, then hands off. Reads and retries go through the record, which
 * only its initiator may use until the Agent exists.
 */
import { SqlClient } from "@effect/sql"
import { recordAudit } from "@svc/core/audit"
import { NotFound, ResourceConflict } from "@svc/core/errors"
import { CurrentCaller } from "@svc/core/iam"
import { type AgentId, type ConfigurationId, type NamespaceId, type RequestId, WorkId } from "@svc/core/schema"
import { AGENT_PROVISION, AgentProvisionRequest, type ProvisioningPhase, WorkOutbox } from "@svc/core/tenancy"
import { WorkItemsRepo } from "@svc/core/db"
import { Effect, Option, Schema } from "effect"
import { authorize } from "../auth/authorize.js"
import { admitBindings } from "../configurations/configurations.js"
import { namespaceRef } from "../iam/access.js"
import { lockNamespaceForWrite, requireExternalNamespaceProvisioned } from "../namespaces/children.js"
import { secretRef } from "../secrets/policy.js"
import { agentFieldsOf } from "./agents.js"
import { admitLaunchSettings, type LaunchDraft } from "./admission.js"
import { bodyDigest, resolveRequest } from "./provisionRequest.js"
import type { ProvisionAgent, ProvisioningWork } from "@svc/core/api"
import { currentWorkspaceDefaultsId } from "./workspaceDefaults.js"

interface ProvisioningRow {
  readonly id: string
  readonly namespace_id: string
  readonly request_id: string
  readonly body_digest: string
  readonly initiator_principal_id: string
  readonly request: unknown
  readonly phase: ProvisioningPhase
  readonly agent_id: string | null
  readonly configuration_id: string | null
  readonly created_at: Date
  readonly updated_at: Date
}

const COLUMNS = `p.id, p.namespace_id, p.request_id, p.body_digest, p.initiator_principal_id, p.request, p.phase, p.agent_id,
  p.configuration_id, p.created_at, p.updated_at`

export const provisioningRef = (namespaceId: string, workId: string) => ({ kind: "provisioning", id: workId, namespaceId }) as const

const notFound = () => new NotFound({ message: "The provisioning work does not exist." })

/** The record under its live Namespace, by id or by request id. */
const findProvisioning = (namespaceId: string, by: { readonly id: string } | { readonly requestId: string }) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<ProvisioningRow>`
      SELECT ${sql.unsafe(COLUMNS)}
      FROM agent_provisioning p JOIN namespaces n ON n.id = p.namespace_id
      WHERE p.namespace_id = ${namespaceId} AND n.status <> 'deleted'
        AND ${"id" in by ? sql`p.id = ${by.id}` : sql`p.request_id = ${by.requestId}`}
    `.pipe(Effect.orDie)
    return Option.fromNullable(rows[0])
  })

/**
 * SPEC 4.4: before the Agent exists only the initiating principal may use the record; anyone
 * else gets the same 404 as for a record that does not exist.
 */
const usableBy = (row: ProvisioningRow, principalId: string) => row.agent_id !== null || row.initiator_principal_id === principalId

const requireUsable = (namespaceId: string, workId: string) =>
  Effect.gen(function* () {
    const caller = yield* CurrentCaller
    const row = yield* findProvisioning(namespaceId, { id: workId })
    if (Option.isNone(row) || !usableBy(row.value, caller.principalId)) return yield* notFound()
    return row.value
  })

const toWork = (row: ProvisioningRow) =>
  Effect.map(workStatus(AGENT_PROVISION, row.id), (work): ProvisioningWork => ({
    id: row.id as WorkId,
    workId: row.id as WorkId,
    requestId: row.request_id as RequestId,
    namespaceId: row.namespace_id as NamespaceId,
    status: work.status,
    phase: row.phase,
    ...(row.agent_id === null ? {} : { agentId: row.agent_id as AgentId }),
    ...(row.configuration_id === null ? {} : { configurationId: row.configuration_id as ConfigurationId }),
    attemptCount: work.attemptCount,
    lastAttempt: work.lastAttempt,
    nextAttemptAt: work.nextAttemptAt,
    error: work.status !== "failed"
      ? null
      : { code: work.lastAttempt?.code ?? "PROVISIONING_FAILED", message: work.lastAttempt?.message ?? "The provisioning failed." },
    url: `/namespaces/${row.namespace_id}/agents/provision/${row.id}`,
    createdAt: row.created_at,
    updatedAt: row.updated_at
  }))

/** A repeated `requestId`: the same initiator with the same body gets the record, anyone else 409. */
const replay = (row: ProvisioningRow, principalId: string, digest: string) =>
  row.initiator_principal_id === principalId && row.body_digest === digest
    ? toWork(row)
    : Effect.fail(new ResourceConflict({ message: "The requestId was already used in this Namespace for a different request." }))

const nameTaken = (namespaceId: string, name: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql`SELECT 1 FROM agents WHERE namespace_id = ${namespaceId} AND name = ${name}`.pipe(Effect.orDie)
    return rows.length > 0
  })

/** Both creates in the Namespace: `agent:create` and `configuration:create` (SPEC 4.4). */
const authorizeCreates = (namespaceId: string) =>
  Effect.zipRight(authorize("agent:create", namespaceRef(namespaceId)), authorize("configuration:create", namespaceRef(namespaceId)))

export const provisionAgent = Effect.fn("Agents.provision")(function* (namespaceId: string, body: ProvisionAgent) {
  const caller = yield* CurrentCaller
  yield* authorizeCreates(namespaceId)
  const digest = bodyDigest(body)
  const earlier = yield* findProvisioning(namespaceId, { requestId: body.requestId })
  if (Option.isSome(earlier)) return yield* replay(earlier.value, caller.principalId, digest)
  const resolved = yield* resolveRequest(namespaceId, body)
  const launch = resolved.agent
  const draft: LaunchDraft = {
    executionMode: launch.executionMode ?? "embedded",
    backendId: launch.backendId ?? null,
    harnessAuth: launch.harnessAuth ?? null,
    plugins: launch.plugins
  }
  const request: AgentProvisionRequest = { configuration: resolved.configuration, agent: agentFieldsOf(launch, draft) }
  const sql = yield* SqlClient.SqlClient
  const outbox = yield* WorkOutbox
  const id = WorkId.make()
  const admit = Effect.gen(function* () {
    const namespace = yield* lockNamespaceForWrite(namespaceId)
    if (namespace.status === "failed") {
      return yield* new ResourceConflict({ message: "The Namespace failed to provision and cannot accept new Agents." })
    }
    yield* requireExternalNamespaceProvisioned(namespace)
    yield* admitBindings(namespaceId, resolved.configuration.secretBindings)
    yield* admitLaunchSettings(namespaceId, draft)
    if (launch.workspaceDefaultsId !== undefined && launch.workspaceDefaultsId !== (yield* currentWorkspaceDefaultsId)) {
      return yield* new ResourceConflict({ message: "The workspaceDefaultsId is stale; read the current workspace defaults and retry." })
    }
    if (yield* nameTaken(namespaceId, launch.name)) {
      return yield* new ResourceConflict({ message: "An Agent with this name already exists in the Namespace." })
    }
    const inserted = yield* sql<ProvisioningRow>`
      INSERT INTO agent_provisioning AS p (id, namespace_id, request_id, body_digest, initiator_principal_id, request)
      VALUES (${id}, ${namespaceId}, ${body.requestId}, ${digest}, ${caller.principalId}, ${JSON.stringify(request)}::jsonb)
      ON CONFLICT (namespace_id, request_id) DO NOTHING
      RETURNING ${sql.unsafe(COLUMNS)}
    `
    // The same requestId admitted concurrently: the first one's record answers.
    if (inserted[0] === undefined) {
      const concurrent = yield* findProvisioning(namespaceId, { requestId: body.requestId })
      return yield* replay(Option.getOrThrow(concurrent), caller.principalId, digest)
    }
    yield* outbox.enqueue({ kind: AGENT_PROVISION, key: id, payload: { namespaceId, workId: id } })
    yield* recordAudit({
      kind: "agent.provisioning-admitted",
      outcome: "success",
      actorPrincipalId: caller.principalId,
      namespaceId,
      resource: { kind: "provisioning", id },
      details: { requestId: body.requestId, name: launch.name, presetId: body.presetId ?? null }
    })
    return yield* toWork(inserted[0])
  })
  return yield* sql.withTransaction(admit).pipe(Effect.catchTag("SqlError", Effect.die))
})

export const getProvisioning = Effect.fn("Agents.provisioning")(function* (namespaceId: string, workId: string) {
  yield* authorize("provisioning:read", provisioningRef(namespaceId, workId))
  return yield* toWork(yield* requireUsable(namespaceId, workId))
})

const decodeRequest = Schema.decodeUnknownOption(AgentProvisionRequest)

/** Every Secret the stored request uses: its Configuration's bindings and its harness Secret. */
const requestSecretIds = (stored: unknown): ReadonlyArray<string> =>
  Option.match(decodeRequest(stored), {
    onNone: () => [],
    onSome: (request) => [
      ...Object.values(request.configuration.secretBindings).map((binding) => binding.source.id),
      ...(request.agent.harnessSecretId === null ? [] : [request.agent.harnessSecretId])
    ]
  })

/**
 * SPEC 3: only a `failed` item is retried (409 otherwise); the work resumes at the phase that
 * failed. Two concurrent retries queue one item: at most one unfinished item per work id. While the Agent does not exist yet, the retrying caller (its initiator) must still
 * hold what admission checked: both creates in the Namespace and `operate` on every Secret.
 */
export const retryProvisioning = Effect.fn("Agents.retryProvisioning")(function* (namespaceId: string, workId: string) {
  const caller = yield* CurrentCaller
  yield* authorize("provisioning:operate", provisioningRef(namespaceId, workId))
  const sql = yield* SqlClient.SqlClient
  const outbox = yield* WorkOutbox
  const retry = Effect.gen(function* () {
    yield* lockNamespaceForWrite(namespaceId)
    const row = yield* requireUsable(namespaceId, workId)
    if ((yield* workStatus(AGENT_PROVISION, workId)).status !== "failed") {
      return yield* new ResourceConflict({ message: "Only a failed provisioning can be retried." })
    }
    if (row.agent_id === null) {
      yield* authorizeCreates(namespaceId)
      for (const secretId of requestSecretIds(row.request)) yield* authorize("secret:operate", secretRef(namespaceId, secretId))
    }
    yield* sql`UPDATE agent_provisioning SET updated_at = now() WHERE id = ${workId}`
    yield* outbox.enqueue({ kind: AGENT_PROVISION, key: workId, payload: { namespaceId, workId } })
    yield* recordAudit({
      kind: "agent.provisioning-retried",
      outcome: "success",
      actorPrincipalId: caller.principalId,
      namespaceId,
      resource: { kind: "provisioning", id: workId },
      details: { phase: row.phase }
    })
    return yield* toWork(yield* requireUsable(namespaceId, workId))
  })
  return yield* sql.withTransaction(retry).pipe(Effect.catchTag("SqlError", Effect.die))
})

/** The public status of the work of a kind and key (`WorkItemsRepo`). */
const workStatus = (kind: string, key: string) => Effect.flatMap(WorkItemsRepo, (work) => work.status(kind, key))
