/**
 * Repository sessions of Agent revisions (SPEC 1.8, 2.14, 4.8; DESIGN §12): at deploy the
 * worker opens one session per frozen grant through the Repo Driver and hands its client
 * material to the Compute Driver; at stop, redeploy and deletion it retires them, and
 * `repository.cleanup` (`cleanup.ts`) closes and disposes what was retired.
 *
 * Crash safety: the admission id of a (revision, grant) is recorded (`opening`) before the
 * credential service is asked, so a retried attempt asks again with the same id:
 * - `created`: the bearer goes into the client material, then the row becomes `open`;
 * - `recovered` with the material already holding that session's bearer: `open`;
 * - `recovered` without it (the attempt died between admission and writing the material; the
 *   service never repeats a bearer): that session is retired and closed, and a fresh admission
 *   id opens a new one;
 * - `missing` (the id is too old and the service never saw it): retired, and a fresh id opens one.
 * The bearer exists only in the Repo Driver's answer and the material; never in a log line, a
 * row, an audit record, the revision or a response.
 */
import { SqlClient } from "@effect/sql"
import { type AgentRepositorySessionRow, AgentRepositorySessionsRepo } from "@svc/core/db"
import { ComputeDriver, type ComputeError, type GatewayRef } from "@svc/core/drivers/compute"
import { type ControlUnavailable, FrozenGrant, newAdmissionId, RepoDriver, type SessionRefused } from "@svc/core/drivers/repo"
import { enqueue } from "@svc/core/work"
import { Duration, Effect, Option, Schema } from "effect"
import { WorkFailure } from "../engine/failure.js"

export const REPOSITORY_CLEANUP = "repository.cleanup"
export const RepositoryCleanupPayload = Schema.Struct({ admissionId: Schema.String })

/** How long a cleanup item retries: past the longest installation token lifetime (one hour). */
export const CLEANUP_DEADLINE = Duration.hours(2)

/** How long a renewed session stays usable after its replacement was admitted. */
export const RENEWAL_OVERLAP = Duration.minutes(1)

/** Attempts of a deployment that find the credential service unreachable before it fails. */
export const REPOSITORY_ATTEMPTS = 4

export const RepositoryWorkCodes = {
  DEPENDENCY_UNAVAILABLE: "DEPENDENCY_UNAVAILABLE",
  NOT_IMPLEMENTED: "NOT_IMPLEMENTED",
  RESOURCE_CONFLICT: "RESOURCE_CONFLICT",
  REPOSITORY_CLEANUP_PENDING: "REPOSITORY_CLEANUP_PENDING"
} as const

export const repositoryDatabaseFailure = (cause: unknown) =>
  Effect.logWarning("repository sessions: database unavailable", { cause: String(cause) }).pipe(
    Effect.zipRight(new WorkFailure({ code: RepositoryWorkCodes.DEPENDENCY_UNAVAILABLE, message: "The database was unavailable; the work will be retried." }))
  )

/** The credential service could not be reached: retried, then the deployment fails. */
export const controlFailure = (attempt: number) => (error: ControlUnavailable) =>
  Effect.logWarning("repository sessions: the credential service is unavailable", { reason: error.reason, attempt }).pipe(
    Effect.zipRight(new WorkFailure({
      code: RepositoryWorkCodes.DEPENDENCY_UNAVAILABLE,
      message: "The credential service is unavailable.",
      permanent: attempt >= REPOSITORY_ATTEMPTS
    }))
  )

const refusedFailure = (error: SessionRefused) =>
  Effect.logWarning("repository sessions: the credential service refused a session", { status: error.status, message: error.message }).pipe(
    Effect.zipRight(new WorkFailure({
      code: RepositoryWorkCodes.RESOURCE_CONFLICT,
      message: error.status === 409
        ? "The credential service refused a repository session (a changed registry or its session limit); deploy again."
        : "The credential service refused a repository session.",
      permanent: true
    }))
  )

/** The revision's frozen grants; one that does not decode fails the deployment for good. */
export const frozenGrants = (raw: ReadonlyArray<unknown> | undefined) =>
  Schema.decodeUnknown(Schema.Array(FrozenGrant))(raw ?? []).pipe(
    Effect.mapError(() => new WorkFailure({
      code: RepositoryWorkCodes.RESOURCE_CONFLICT,
      message: "The revision's repository grants are unreadable; deploy again.",
      permanent: true
    }))
  )

const Repos = AgentRepositorySessionsRepo.Default

const materialFailure = (error: ComputeError): WorkFailure =>
  error._tag === "ComputeFailure"
    ? new WorkFailure({ code: error.code, message: error.message, permanent: error.permanent })
    : new WorkFailure({ code: RepositoryWorkCodes.NOT_IMPLEMENTED, message: "The Compute Driver cannot deliver repository client material.", permanent: true })

interface Retired {
  readonly admission_id: string
  readonly session_id: string | null
  readonly revision_id: string
}

/**
 * Retires sessions (`select` marks them `closing`) and queues their cleanup in one transaction,
 * then closes them at once where the Repo Driver answers (cleanup retries what did not close).
 */
export const retireSessions = <E, R>(select: Effect.Effect<ReadonlyArray<Retired>, E, R>, closeAfter?: Duration.Duration) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const retired = yield* sql.withTransaction(Effect.gen(function* () {
      const rows = yield* select
      for (const row of rows) {
        yield* enqueue({
          kind: REPOSITORY_CLEANUP,
          key: row.admission_id,
          payload: { admissionId: row.admission_id },
          deadline: CLEANUP_DEADLINE,
          delay: closeAfter
        })
      }
      return rows
    })).pipe(Effect.catchAll(repositoryDatabaseFailure))
    const driver = yield* Effect.serviceOption(RepoDriver)
    // A renewed session stays usable a little longer: its replacement's material is written first.
    if (Option.isNone(driver) || closeAfter !== undefined) return retired
    for (const row of retired) {
      if (row.session_id === null) continue
      yield* driver.value.close(row.session_id).pipe(
        Effect.tap(() => Effect.logInfo("repository sessions: closed", { sessionId: row.session_id })),
        Effect.catchAll((error) => Effect.logWarning("repository sessions: close deferred to cleanup", { sessionId: row.session_id, reason: error.reason }))
      )
    }
    return retired
  })

/**
 * Removes the Agent's client material of revisions without a live session. Listed before the
 * sessions are read: a deployment records its admission before it writes material, so material
 * being written always has a live row by then.
 */
const removeMaterial = (ref: Omit<GatewayRef, "revisionId">) =>
  Effect.gen(function* () {
    const clients = (yield* ComputeDriver).repositoryClients
    if (clients === undefined) return
    const listed = yield* clients.revisions(ref)
    if (listed.length === 0) return
    const live = new Set(yield* (yield* AgentRepositorySessionsRepo).liveRevisions(ref.agentId))
    for (const revisionId of listed) {
      if (!live.has(revisionId)) yield* clients.remove({ ...ref, revisionId })
    }
  }).pipe(Effect.catchAll((error) => Effect.logWarning("repository sessions: client material not removed", { agentId: ref.agentId, reason: error._tag })))

/**
 * Every session of the Agent but those of `keepRevisionId` and of a deployment in flight
 * (`retireAgent`), and their revisions' client material.
 */
export const retireAgentSessions = (ref: Omit<GatewayRef, "revisionId">, keepRevisionId: string | null) =>
  Effect.gen(function* () {
    const rows = yield* AgentRepositorySessionsRepo
    const retired = yield* retireSessions(rows.retireAgent(ref.agentId, keepRevisionId))
    // Also what the sweep retired: its rows are no longer live.
    yield* removeMaterial(ref)
    if (retired.length > 0) yield* Effect.logInfo("repository sessions: retired", { agentId: ref.agentId, keepRevisionId, retired: retired.length })
  }).pipe(Effect.provide(Repos))

/** The sessions (and material) of one revision whose deployment failed for good. */
export const retireRevisionSessions = (ref: GatewayRef) =>
  Effect.flatMap(AgentRepositorySessionsRepo, (rows) => retireSessions(rows.retireRevision(ref.revisionId))).pipe(
    Effect.zipRight(removeMaterial(ref)),
    Effect.catchAll((failure) => Effect.logWarning("repository sessions: retirement deferred to the sweep", { revisionId: ref.revisionId, code: failure.code })),
    Effect.provide(Repos)
  )

/**
 * Opens (or recovers) a session for every grant of the revision and puts its client material in
 * place. The caller holds the Agent's gateway lock. `attempt` is the deployment's attempt number.
 */
export const ensureRevisionSessions = (ref: GatewayRef, raw: ReadonlyArray<unknown> | undefined, attempt: number) =>
  Effect.gen(function* () {
    const grants = yield* frozenGrants(raw)
    if (grants.length === 0) return
    const selected = yield* Effect.serviceOption(RepoDriver)
    if (Option.isNone(selected)) {
      return yield* new WorkFailure({
        code: RepositoryWorkCodes.DEPENDENCY_UNAVAILABLE,
        message: "No Repo Driver is selected; the revision's repository grants cannot be delivered.",
        permanent: true
      })
    }
    const driver = selected.value
    const compute = yield* ComputeDriver
    const clients = compute.repositoryClients
    if (clients === undefined) {
      return yield* new WorkFailure({
        code: RepositoryWorkCodes.NOT_IMPLEMENTED,
        message: compute.repositoryClientsUnavailable ?? "The selected Compute Driver cannot deliver repository client material.",
        permanent: true
      })
    }
    const rows = yield* AgentRepositorySessionsRepo
    const unavailable = controlFailure(attempt)
    yield* driver.checkAdmissionReady.pipe(Effect.catchAll(unavailable))
    const withMaterial = new Set(yield* clients.sessions(ref).pipe(Effect.mapError(materialFailure)))
    const live = yield* rows.live(ref.revisionId).pipe(Effect.catchAll(repositoryDatabaseFailure))

    for (const [index, grant] of grants.entries()) {
      const current = live.find((r) => r.grant_index === index)
      let row: AgentRepositorySessionRow | undefined = current
      const usable = current?.state === "open" && current.session_id !== null && withMaterial.has(current.session_id)
      if (usable && !current.expiring) continue
      for (let round = 0; round < 3; round++) {
        if (row === undefined || row.state === "open") {
          // Replaced: an open session whose material is gone (closed now), or one near its
          // deadline (renewal: closed by cleanup a minute later, after the new bearer is in place).
          if (row !== undefined) yield* retireSessions(rows.retireAdmission(row.admission_id, null), usable ? RENEWAL_OVERLAP : undefined)
          const admissionId = newAdmissionId()
          yield* rows.insertOpening({
            admission_id: admissionId,
            namespace_id: ref.namespaceId,
            agent_id: ref.agentId,
            revision_id: ref.revisionId,
            grant_index: index,
            grant_body: grant
          }).pipe(Effect.catchAll(repositoryDatabaseFailure))
          row = { admission_id: admissionId, namespace_id: ref.namespaceId, agent_id: ref.agentId, revision_id: ref.revisionId, grant_index: index, grant_body: grant, session_id: null, state: "opening" }
        }
        const admissionId = row.admission_id
        const opened = yield* driver.open(grant, admissionId).pipe(
          Effect.catchTags({ ControlUnavailable: unavailable, SessionRefused: refusedFailure })
        )
        if (opened.result === "created") {
          yield* clients.write(ref, {
            sessionId: opened.session.sessionId,
            repository: opened.client.repository,
            listenerUrl: opened.client.listenerUrl,
            bearer: opened.bearer
          }).pipe(Effect.mapError(materialFailure))
        }
        if (opened.result === "created" || (opened.result === "recovered" && opened.session.state === "active" && withMaterial.has(opened.session.sessionId))) {
          yield* rows.markOpen({ admission_id: admissionId, session_id: opened.session.sessionId, deadline_ms: opened.session.deadlineWallMs })
            .pipe(Effect.catchAll(repositoryDatabaseFailure))
          yield* Effect.logInfo("repository sessions: open", {
            agentId: ref.agentId,
            revisionId: ref.revisionId,
            repositoryRef: grant.repositoryRef,
            sessionId: opened.session.sessionId,
            outcome: opened.result
          })
          break
        }
        // Recovered without its bearer, or never seen: retire it and admit a fresh one.
        const sessionId = opened.result === "recovered" ? opened.session.sessionId : null
        yield* Effect.logInfo("repository sessions: replacing an admission", { agentId: ref.agentId, revisionId: ref.revisionId, outcome: opened.result, sessionId })
        yield* retireSessions(rows.retireAdmission(admissionId, sessionId))
        row = undefined
        if (round === 2) {
          return yield* new WorkFailure({ code: RepositoryWorkCodes.DEPENDENCY_UNAVAILABLE, message: "A repository session could not be opened; the work will be retried." })
        }
      }
    }
  }).pipe(Effect.provide(Repos))

/** Gateway environment for the revision's client material (`GIT_CONFIG_GLOBAL`, ...), redacted like Secrets. */
export const repositoryEnvironment = (ref: GatewayRef) =>
  Effect.gen(function* () {
    const clients = (yield* ComputeDriver).repositoryClients
    if (clients === undefined) return {}
    return yield* clients.environment(ref).pipe(Effect.mapError(materialFailure))
  })
