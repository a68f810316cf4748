/**
 * Agent provisioning (SPEC 2.13, 3, 4.4; docs/decisions/agent-provisioning.md): admission
 * records the request and queues `agent.provision` in one transaction; the worker creates the
 * Configuration, then the Agent, then hands off. Reads and retries go through the record, which
 * only its initiator may use until the Agent exists.
 */
import { SqlClient } from "@effect/sql"
import type { ProvisionAgent, ProvisioningWork } from "@svc/core/api"
import { AuditLog } from "@svc/core/audit"
import { AgentsRepo, ProvisioningRepo, type ProvisioningRow, WorkItemsRepo } from "@svc/core/db"
import { NotFound, ResourceConflict } from "@svc/core/errors"
import { CurrentCaller } from "@svc/core/iam"
import { type NamespaceId, WorkId } from "@svc/core/schema"
import { AGENT_PROVISION, AgentProvisionRequest } from "@svc/core/tenancy"
import { Effect, Option, Schema } from "effect"
import { Authorization } from "../auth/authorize.js"
import { admitBindings } from "../configurations/configurations.js"
import { namespaceRef } from "../iam/access.js"
import { requireExternalNamespaceProvisioned } from "../namespaces/guard.js"
import { NamespaceGuard } from "../namespaces/guard.js"
import { secretRef } from "../secrets/policy.js"
import { AgentAdmission, type LaunchDraft } from "./admission.js"
import { agentFieldsOf } from "./draft.js"
import { provisioningRef } from "./policy.js"
import { bodyDigest, resolveRequest } from "./provisionRequest.js"
import { currentWorkspaceDefaultsId } from "./workspaceDefaults.js"
import { requestedRepositories } from "./repositoryAdmission.js"
import { exportedFn } from "@svc/core/observability"

const isWorkId = Schema.is(WorkId)

/**
 * The record's phases move its own `updated_at`; an attempt's outcome (its status turning
 * `succeeded` or `failed`, or a retry's failure) is recorded on the work item a moment later.
 */
const latest = (recorded: Date, attempted: Date | undefined): Date =>
  attempted !== undefined && attempted.getTime() > recorded.getTime() ? attempted : recorded

const notFound = () => new NotFound({ message: "The provisioning work does not exist." })

/**
 * SPEC 4.4: before the Agent exists only the initiating principal may use the record; anyone
 * else gets the same 404 as for a record that does not exist.
 */
const usableBy = (row: ProvisioningRow, principalId: string) => row.agent_id !== null || row.initiator_principal_id === principalId

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

export class Provisioning extends Effect.Service<Provisioning>()("@svc/api/AgentProvisioning", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const records = yield* ProvisioningRepo
    const agents = yield* AgentsRepo
    const work = yield* WorkItemsRepo
    const audit = yield* AuditLog
    const { authorize } = yield* Authorization
    const namespaces = yield* NamespaceGuard
    const admission = yield* AgentAdmission

    /** The provisioning record `workId` names, if the caller may use it; 404 for any other id (SPEC 4 path shape). */
    const requireUsable = (namespaceId: NamespaceId, workId: string) =>
      Effect.gen(function* () {
        const caller = yield* CurrentCaller
        if (!isWorkId(workId)) return yield* notFound()
        const row = yield* records.findLive(namespaceId, workId)
        if (Option.isNone(row) || !usableBy(row.value, caller.principalId)) return yield* notFound()
        return row.value
      })

    const toWork = (row: ProvisioningRow) =>
      Effect.map(work.status(AGENT_PROVISION, row.id), (status): ProvisioningWork => ({
        id: row.id,
        workId: row.id,
        requestId: row.request_id,
        namespaceId: row.namespace_id,
        status: status.status,
        phase: row.phase,
        ...(row.agent_id === null ? {} : { agentId: row.agent_id }),
        ...(row.configuration_id === null ? {} : { configurationId: row.configuration_id }),
        attemptCount: status.attemptCount,
        lastAttempt: status.lastAttempt,
        nextAttemptAt: status.nextAttemptAt,
        ...(status.status !== "failed"
          ? {}
          : { error: { code: status.lastAttempt?.code ?? "PROVISIONING_FAILED", message: status.lastAttempt?.message ?? "The provisioning failed." } }),
        url: `/namespaces/${row.namespace_id}/agents/provision/${row.id}`,
        createdAt: row.created_at,
        updatedAt: latest(row.updated_at, status.lastAttempt?.at)
      }))

    /** A repeated `requestId`: the same initiator with the same body gets the record, anyone else 409. */
    const replay = (row: ProvisioningRow, principalId: string, digest: string) =>
      row.initiator_principal_id === principalId && row.body_digest === digest
        ? toWork(row)
        : Effect.fail(new ResourceConflict({ message: "The requestId was already used in this Namespace for a different request." }))

    /** Both creates in the Namespace: `agent:create` and `configuration:create` (SPEC 4.4). */
    const authorizeCreates = (namespaceId: NamespaceId) =>
      Effect.zipRight(authorize("agent:create", namespaceRef(namespaceId)), authorize("configuration:create", namespaceRef(namespaceId)))

    const provision = exportedFn("Agents.provision")(function* (namespaceId: NamespaceId, body: ProvisionAgent) {
      const caller = yield* CurrentCaller
      yield* authorizeCreates(namespaceId)
      const digest = bodyDigest(body)
      const earlier = yield* records.findByRequest(namespaceId, body.requestId)
      if (Option.isSome(earlier)) return { provisioning: yield* replay(earlier.value, caller.principalId, digest) }
      const resolved = yield* resolveRequest(namespaceId, body).pipe(Effect.provideService(SqlClient.SqlClient, sql))
      const launch = resolved.agent
      const draft: LaunchDraft = {
        executionMode: launch.executionMode ?? "embedded",
        backendId: launch.backendId ?? null,
        harnessAuth: launch.harnessAuth ?? null,
        plugins: launch.plugins,
        repositories: requestedRepositories(launch)
      }
      const request: AgentProvisionRequest = { configuration: resolved.configuration, agent: agentFieldsOf(launch, draft) }
      const id = WorkId.make()
      const admit = Effect.gen(function* () {
        const namespace = yield* namespaces.lockForWrite(namespaceId)
        if (namespace.status === "failed") {
          return yield* new ResourceConflict({ message: "The Namespace failed to provision and cannot accept new Agents." })
        }
        yield* requireExternalNamespaceProvisioned(namespace)
        yield* admitBindings(namespaceId, resolved.configuration.secretBindings)
        yield* admission.admitLaunchSettings(namespaceId, draft)
        if (launch.workspaceDefaultsId !== undefined && launch.workspaceDefaultsId !== (yield* currentWorkspaceDefaultsId)) {
          return yield* new ResourceConflict({ message: "The workspaceDefaultsId is stale; read the current workspace defaults and retry." })
        }
        if (yield* agents.nameTaken({ namespace_id: namespaceId, name: launch.name })) {
          return yield* new ResourceConflict({ message: "An Agent with this name already exists in the Namespace." })
        }
        const inserted = yield* records.insert({
          id,
          namespace_id: namespaceId,
          request_id: body.requestId,
          body_digest: digest,
          initiator_principal_id: caller.principalId,
          request
        })
        // The same requestId admitted concurrently: the first one's record answers.
        if (Option.isNone(inserted)) {
          const concurrent = yield* records.findByRequest(namespaceId, body.requestId)
          return yield* replay(Option.getOrThrow(concurrent), caller.principalId, digest)
        }
        yield* work.enqueue({ kind: AGENT_PROVISION, key: id, payload: { namespaceId, workId: id } })
        yield* audit.record({
          kind: "agent.provisioning-admitted",
          outcome: "success",
          actorPrincipalId: caller.principalId,
          namespaceId,
          resource: { kind: "provisioning", id },
          details: { requestId: body.requestId, name: launch.name, presetId: body.presetId ?? null }
        })
        return yield* toWork(inserted.value)
      })
      const provisioning = yield* sql.withTransaction(admit).pipe(
        Effect.provideService(SqlClient.SqlClient, sql),
        Effect.catchTag("SqlError", Effect.die)
      )
      return { provisioning }
    })

    const get = exportedFn("Agents.provisioning")(function* (namespaceId: NamespaceId, workId: string) {
      yield* authorize("provisioning:read", provisioningRef(namespaceId, workId))
      return yield* toWork(yield* requireUsable(namespaceId, workId))
    })

    /**
     * SPEC 3: only a `failed` item is retried (409 otherwise); the work resumes at the phase that
     * failed. Of two concurrent retries one queues the item and the other, which then finds it queued, is 409.
     * While the Agent does not exist yet, the retrying caller (its initiator) must still hold what
     * admission checked: both creates in the Namespace and `operate` on every Secret.
     */
    const retry = exportedFn("Agents.retryProvisioning")(function* (namespaceId: NamespaceId, requested: string) {
      const caller = yield* CurrentCaller
      yield* authorize("provisioning:operate", provisioningRef(namespaceId, requested))
      const write = Effect.gen(function* () {
        yield* namespaces.lockForWrite(namespaceId)
        const row = yield* requireUsable(namespaceId, requested)
        const workId = row.id
        const requireFailed = Effect.flatMap(work.status(AGENT_PROVISION, workId), ({ status }) =>
          status === "failed" ? Effect.void : Effect.fail(new ResourceConflict({ message: "Only a failed provisioning can be retried." })))
        yield* requireFailed
        // Again under the record's row lock: a concurrent retry that got it first has queued the work.
        yield* records.touch(workId)
        yield* requireFailed
        if (row.agent_id === null) {
          yield* authorizeCreates(namespaceId)
          for (const secretId of requestSecretIds(row.request)) yield* authorize("secret:operate", secretRef(namespaceId, secretId))
        }
        yield* work.enqueue({ kind: AGENT_PROVISION, key: workId, payload: { namespaceId, workId } })
        yield* audit.record({
          kind: "agent.provisioning-retried",
          outcome: "success",
          actorPrincipalId: caller.principalId,
          namespaceId,
          resource: { kind: "provisioning", id: workId },
          details: { phase: row.phase }
        })
        return yield* toWork(yield* requireUsable(namespaceId, workId))
      })
      return yield* sql.withTransaction(write).pipe(Effect.catchTag("SqlError", Effect.die))
    })

    return { provision, get, retry }
  }),
  dependencies: [
    ProvisioningRepo.Default,
    AgentsRepo.Default,
    WorkItemsRepo.Default,
    AuditLog.Default,
    Authorization.Default,
    NamespaceGuard.Default,
    AgentAdmission.Default
  ]
}) {}
