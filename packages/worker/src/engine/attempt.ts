import type { SqlError } from "@effect/sql/SqlError"
import { Cause, Duration, Effect, Exit, Option, Schedule } from "effect"
import { asCurrentAttempt, attemptAnnotations } from "./attemptLogs.js"
import { backoffDelay } from "./backoff.js"
import { recordableCode, recordableMessage, WorkCodes, WorkMessages } from "./failure.js"
import type { HandlerContext, RegisteredHandler, WorkHandlersRegistry } from "./handlers.js"
import type { ClaimedItem, Leases } from "./leases.js"
import type { ResolvedOptions } from "./options.js"
import type { Outcomes, Recorded } from "./outcomes.js"
import { recordClaim, recordOutcome } from "./metrics.js"
import type { Watch, Watched } from "./watcher.js"

type Outcome =
  | { readonly _tag: "Succeeded" }
  | { readonly _tag: "Failed"; readonly code: string; readonly message: string; readonly permanent: boolean }
  | { readonly _tag: "LeaseLost" }
  | { readonly _tag: "DeadlineReached" }

export interface AttemptDeps {
  readonly options: ResolvedOptions
  readonly leases: Leases
  readonly outcomes: Outcomes
  readonly registry: WorkHandlersRegistry
  /** Whether a tracer other than Effect's native one is installed (spans are exported). */
  readonly tracing: boolean
}

/** Restores interruptibility inside the slot's uninterruptible loop (`Effect.uninterruptibleMask`). */
export type Restore = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>

/** A failed outcome write is tried again at once and then with backoff, six tries in all; past that the lease expires and the reaper takes over. */
const writeRetry = Schedule.exponential(Duration.millis(100), 2).pipe(Schedule.intersect(Schedule.recurs(4)))

const handlerContext = (item: ClaimedItem, workerId: string): HandlerContext => ({
  id: item.id,
  kind: item.kind,
  key: item.key,
  attempt: item.attempt,
  scheduledAt: item.scheduledAt,
  claimedAt: item.claimedAt,
  deadlineAt: item.deadlineAt,
  createdAt: item.createdAt,
  workerId
})

const internalError: Outcome = {
  _tag: "Failed",
  code: WorkCodes.INTERNAL_ERROR,
  message: WorkMessages.INTERNAL_ERROR,
  permanent: false
}

/** Runs the handler and classifies its exit. Defects are logged here and recorded with a fixed text. */
const runHandler = (handler: RegisteredHandler, item: ClaimedItem, workerId: string): Effect.Effect<Outcome> =>
  handler.run(item.payload, handlerContext(item, workerId)).pipe(
    Effect.exit,
    Effect.flatMap((exit): Effect.Effect<Outcome> => {
      if (Exit.isSuccess(exit)) return Effect.succeed({ _tag: "Succeeded" })
      const failure = Cause.failureOption(exit.cause)
      if (Option.isSome(failure)) {
        return Effect.succeed({
          _tag: "Failed",
          code: recordableCode(failure.value.code),
          message: recordableMessage(failure.value.message),
          permanent: failure.value.permanent === true
        })
      }
      return Effect.as(Effect.logError("work handler died", exit.cause), internalError)
    })
  )

type Written = { readonly recorded: Recorded | null; readonly next: Option.Option<ClaimedItem> }

/** Writes the outcome (fenced); after a success, claims the next item in the same statement. */
const record = (deps: AttemptDeps, item: ClaimedItem, outcome: Outcome): Effect.Effect<Written, SqlError> => {
  const only = (write: Effect.Effect<Recorded, SqlError>) =>
    Effect.map(write, (recorded): Written => ({ recorded, next: Option.none() }))
  switch (outcome._tag) {
    case "Succeeded":
      return Effect.flatMap(deps.registry.kinds, (kinds) =>
        kinds.length === 0 ? only(deps.outcomes.succeed(item)) : deps.outcomes.succeedAndClaim(item, kinds)
      )
    case "Failed":
      return outcome.permanent
        ? only(deps.outcomes.fail(item, outcome))
        : only(
            Effect.flatMap(backoffDelay(deps.options.backoff, item.attempt), (delay) =>
              deps.outcomes.retry(item, outcome, delay)
            )
          )
    case "DeadlineReached":
      return only(
        deps.outcomes.fail(item, { code: WorkCodes.DEADLINE_EXCEEDED, message: WorkMessages.DEADLINE_EXCEEDED })
      )
    case "LeaseLost":
      return Effect.succeed({ recorded: null, next: Option.none() })
  }
}

const report = (outcome: Outcome, written: Written): Effect.Effect<void> => {
  if (written.recorded === null) return Effect.logWarning("work lease lost during the attempt; its outcome is discarded")
  if (written.recorded._tag === "Fenced") return Effect.logWarning("work lease lost before the outcome was recorded")
  if (outcome._tag === "Succeeded") return Effect.logDebug("work attempt succeeded")
  return Effect.logWarning(
    `work attempt ended: ${outcome._tag}, item ${written.recorded.state}`,
    outcome._tag === "Failed" ? { code: outcome.code } : {}
  )
}

/** Tries a database write once; only when that fails, again on `writeRetry`. */
const retried = <A>(write: Effect.Effect<A, SqlError>): Effect.Effect<A, SqlError> =>
  Effect.catchAll(write, () => Effect.retry(write, writeRetry))

/** Writes the outcome and reports it; a write that keeps failing is left to the lease's expiry. */
const finish = (deps: AttemptDeps, item: ClaimedItem, outcome: Outcome): Effect.Effect<Option.Option<ClaimedItem>> =>
  retried(record(deps, item, outcome)).pipe(
    Effect.flatMap((written) =>
      Effect.as(Effect.zipRight(report(outcome, written), recordOutcome(item.kind, written.recorded)), written.next)
    ),
    Effect.catchAll((error) =>
      Effect.as(
        Effect.logError("work outcome could not be recorded; the lease will expire and the item be retried", error),
        Option.none<ClaimedItem>()
      )
    )
  )

/** Gives the item back (shutdown): queued again, the attempt withdrawn. */
const release = (deps: AttemptDeps, item: ClaimedItem): Effect.Effect<void> =>
  deps.leases.release(item).pipe(
    Effect.tap((released) => (released ? Effect.logInfo("work lease released") : Effect.void)),
    retried,
    Effect.catchAll((error) => Effect.logWarning("work lease release failed; it will expire instead", error))
  )

/**
 * Settles an attempt whose runner was interrupted while its handler ran (the slot calls this once
 * the runner has ended): stopped by the watcher, its outcome is recorded (`DEADLINE_EXCEEDED`, or
 * nothing for a lost lease); interrupted by shutdown, its lease is released.
 */
export const makeSettle =
  (deps: AttemptDeps) =>
  (watched: Watched): Effect.Effect<void> =>
    Effect.annotateLogs(
      watched.stopped === null
        ? release(deps, watched.item)
        : Effect.asVoid(finish(deps, watched.item, { _tag: watched.stopped })),
      attemptAnnotations(watched.item)
    )

/**
 * Runs one claimed attempt to its recorded outcome; returns the next item when the success was
 * recorded together with a new claim. Must run uninterruptibly on the slot's runner fiber: only
 * the handler runs inside `restore`, watched by the slot's `watch`, which interrupts the runner
 * when the lease is lost or the deadline reached. An interrupted attempt (by the watcher, or by
 * shutdown) ends its runner fiber; the slot then settles it (`makeSettle`): outcome recorded, or
 * lease released — back to `queued` with the attempt withdrawn — and starts a new runner.
 */
export const makeAttempt = (deps: AttemptDeps) => {
  const run = (item: ClaimedItem, restore: Restore, watch: Watch): Effect.Effect<Option.Option<ClaimedItem>> =>
    Effect.zipRight(
      recordClaim(item),
      Effect.flatMap(deps.registry.get(item.kind), (handler) => {
        if (Option.isNone(handler)) {
          // Unregistered between claim and run: give it back untouched.
          return Effect.as(Effect.ignoreLogged(retried(deps.leases.release(item))), Option.none<ClaimedItem>())
        }
        return Effect.withFiberRuntime<Outcome>((fiber) => {
          const watched = watch.begin(item, fiber)
          // `end` is the last step inside `restore`: once it ran, the watcher cannot interrupt this attempt.
          return restore(
            Effect.zipLeft(runHandler(handler.value, item, deps.options.workerId), Effect.sync(() => watch.end(watched)))
          )
        }).pipe(Effect.flatMap((outcome) => finish(deps, item, outcome)))
      })
    )
  // Kept at every log level: the handler's own log lines carry them too.
  const annotated = (item: ClaimedItem, restore: Restore, watch: Watch) =>
    asCurrentAttempt(item, run(item, restore, watch))
  // The span only when a tracer exports it: the native (default) tracer's spans reach no one.
  return deps.tracing
    ? (item: ClaimedItem, restore: Restore, watch: Watch): Effect.Effect<Option.Option<ClaimedItem>> =>
        Effect.withSpan(annotated(item, restore, watch), "work.attempt", {
          attributes: { kind: item.kind, id: item.id, attempt: item.attempt },
          captureStackTrace: false
        })
    : annotated
}
