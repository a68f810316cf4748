/**
 * `repository.cleanup` (SPEC 1.4 "repository-session cleanup", 3 "Repository sessions"): one
 * item per admission id, queued when the worker retires a session and by the sweep below. The
 * handler settles the admission:
 * - a retired admission whose outcome was never learnt (`opening`) is asked again with the same
 *   id: `created` or `recovered` name the session (a bearer in the answer is dropped unused),
 *   `missing` or a refusal mean none exists and the row goes;
 * - the session is closed through the Repo Driver (idempotent; the credential service revokes
 *   the installation tokens it holds) and, once its tokens are settled, made `DISPOSED` in the
 *   credential service's store; until then the item retries with backoff
 *   (`REPOSITORY_CLEANUP_PENDING`);
 * - the worker's row goes last, so a crash at any point is repaired by the next attempt.
 *
 * The sweep (every `interval`, default one minute, at start too) retires sessions nobody needs
 * (expired, or of a revision that is not running and has no unfinished deployment), queues
 * cleanup for every retired row and for every closed or expired session of the credential
 * service that is not disposed (also those the worker never opened), deletes disposed
 * sessions older than one hour (SPEC 8 "terminal cleanup retained one hour"), and queues
 * `agent.recover` for running Agents whose sessions near their deadline (renewal).
 */
import { AgentRepositorySessionsRepo, RepositorySessionsRepo } from "@svc/core/db"
import { FrozenGrant, RepoDriver, type RepoDriverShape } from "@svc/core/drivers/repo"
import { AGENT_RECOVER } from "@svc/core/tenancy"
import { enqueue } from "@svc/core/work"
import { RECOVERY_DEADLINE } from "../agents/recovery.js"
import { Cause, Duration, Effect, Layer, Option, Schedule, Schema } from "effect"
import * as WorkHandler from "../engine/handler.js"
import { WorkFailure } from "../engine/failure.js"
import {
  CLEANUP_DEADLINE,
  controlFailure,
  REPOSITORY_CLEANUP,
  RepositoryCleanupPayload,
  repositoryDatabaseFailure,
  RepositoryWorkCodes,
  retireSessions
} from "./sessions.js"
import { exportedFn, withExportedSpan } from "@svc/core/observability"

const Repos = Layer.mergeAll(AgentRepositorySessionsRepo.Default, RepositorySessionsRepo.Default)

/** The session an admission named, or none when it never became one. */
const resolveAdmission = (driver: RepoDriverShape, admissionId: string, grantBody: unknown) =>
  Effect.gen(function* () {
    const grant = Schema.decodeUnknownOption(FrozenGrant)(grantBody)
    if (Option.isNone(grant)) return Option.none<string>()
    const answer = yield* driver.open(grant.value, admissionId).pipe(
      Effect.map(Option.some),
      Effect.catchTag("SessionRefused", () => Effect.succeedNone),
      Effect.catchTag("ControlUnavailable", controlFailure(0))
    )
    if (Option.isNone(answer) || answer.value.result === "missing") return Option.none<string>()
    return Option.some(answer.value.session.sessionId)
  })

/** `repository.cleanup`: close, settle and dispose one admission's session, then forget it. */
export const cleanupRepositorySession = exportedFn("Repositories.cleanup")(function* (payload: typeof RepositoryCleanupPayload.Type) {
  const { admissionId } = payload
  const selected = yield* Effect.serviceOption(RepoDriver)
  if (Option.isNone(selected)) {
    return yield* Effect.logWarning("repository cleanup: no Repo Driver is selected", { admissionId })
  }
  const rows = yield* AgentRepositorySessionsRepo
  const store = yield* RepositorySessionsRepo
  const ours = Option.getOrUndefined(yield* rows.byAdmission(admissionId).pipe(Effect.catchAll(repositoryDatabaseFailure)))
  // Still in use by its revision: not ours to clean (the sweep retires it when it is not).
  if (ours !== undefined && ours.state !== "closing") return
  let sessionId: Option.Option<string>
  if (ours === undefined) {
    sessionId = Option.map(yield* Effect.orDie(store.byAdmission(admissionId)), (row) => row.id)
  } else if (ours.session_id !== null) {
    sessionId = Option.some(ours.session_id)
  } else {
    sessionId = yield* resolveAdmission(selected.value, admissionId, ours.grant_body)
  }
  if (Option.isSome(sessionId)) {
    const status = yield* selected.value.close(sessionId.value).pipe(Effect.catchAll(controlFailure(0)))
    if (Option.isSome(status) && status.value.state !== "DISPOSED") {
      if (status.value.cleanup.tokens !== "settled") {
        return yield* new WorkFailure({
          code: RepositoryWorkCodes.REPOSITORY_CLEANUP_PENDING,
          message: "The session's upstream tokens are not settled yet; cleanup will be retried."
        })
      }
      yield* store.dispose(sessionId.value)
      yield* Effect.logInfo("repository cleanup: session disposed", { sessionId: sessionId.value })
    }
  }
  if (ours !== undefined) yield* rows.remove(admissionId).pipe(Effect.catchAll(repositoryDatabaseFailure))
}, Effect.provide(Repos))

const queue = (admissionId: string) =>
  enqueue({ kind: REPOSITORY_CLEANUP, key: admissionId, payload: { admissionId }, deadline: CLEANUP_DEADLINE })

/** One sweep: how many cleanup items it queued (or found queued). */
export const sweepRepositorySessions = Effect.gen(function* () {
  if (Option.isNone(yield* Effect.serviceOption(RepoDriver))) return 0
  const rows = yield* AgentRepositorySessionsRepo
  const store = yield* RepositorySessionsRepo
  const orphans = yield* retireSessions(rows.retireOrphans)
  const closing = yield* rows.closing
  const ended = yield* store.undisposedEnded
  const admissions = new Set([...closing, ...ended].map((row) => row.admission_id))
  for (const admissionId of admissions) yield* queue(admissionId)
  yield* store.purgeDisposed
  // Sessions of running revisions near their deadline: `agent.recover` renews them.
  for (const agent of yield* rows.renewable) {
    yield* enqueue({ kind: AGENT_RECOVER, key: agent.agent_id, payload: { namespaceId: agent.namespace_id, agentId: agent.agent_id }, deadline: RECOVERY_DEADLINE })
  }
  if (orphans.length > 0 || admissions.size > 0) {
    yield* Effect.logInfo("repository cleanup: sweep done", { retired: orphans.length, queued: admissions.size })
  }
  return admissions.size
}).pipe(Effect.provide(Repos), withExportedSpan("Repositories.cleanupSweep"))

/** The sweep as a scoped fiber: at start, then every `interval`; a failed sweep is logged. */
export const RepositoryCleanupSweepLive = (interval: Duration.DurationInput = Duration.minutes(1)) =>
  Layer.scopedDiscard(
    sweepRepositorySessions.pipe(
      Effect.catchAllCause((cause) => Effect.logWarning("repository cleanup: sweep failed", Cause.pretty(cause))),
      Effect.repeat(Schedule.spaced(interval)),
      Effect.annotateLogs({ fiber: "repository.cleanup-sweep" }),
      Effect.forkScoped
    )
  )

export const RepositoryCleanupLive = WorkHandler.layer(REPOSITORY_CLEANUP, RepositoryCleanupPayload, cleanupRepositorySession)
