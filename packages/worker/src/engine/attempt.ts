import type { SqlError } from "@effect/sql/SqlError"
import { Cause, Clock, Duration, Effect, Exit, Option, Schedule } from "effect"
import { backoffDelay } from "./backoff.js"
import { recordableCode, recordableMessage, WorkCodes, WorkMessages } from "./failure.js"
import type { HandlerContext, RegisteredHandler, WorkHandlersRegistry } from "./handlers.js"
import type { ClaimedItem, Leases } from "./leases.js"
import type { ResolvedOptions } from "./options.js"
import type { Outcomes, Recorded } from "./outcomes.js"
import { recordClaim, recordOutcome } from "./metrics.js"

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
}

/** Restores interruptibility inside the slot's uninterruptible loop (`Effect.uninterruptibleMask`). */
export type Restore = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>

/** Database writes of an outcome are retried briefly; past that the lease expires and the reaper takes over. */
const writeRetry = Schedule.exponential(Duration.millis(100), 2).pipe(Schedule.intersect(Schedule.recurs(5)))

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

/**
 * Watches the attempt while the handler runs: renews the lease every `leaseRenewInterval` and
 * completes when the lease is found lost (another worker may own the item now) or the deadline
 * is reached. A failed renewal (database unreachable) is tried again at the next interval: the
 * fence decides, not the error.
 */
const guard = (deps: AttemptDeps, item: ClaimedItem): Effect.Effect<Outcome> =>
  Effect.gen(function* () {
    const renewEvery = Duration.toMillis(deps.options.leaseRenewInterval)
    // Both instants are database time; the remaining span is measured on the local clock.
    const stopAt = (yield* Clock.currentTimeMillis) + (item.deadlineAt.getTime() - item.claimedAt.getTime())
    for (;;) {
      const left = stopAt - (yield* Clock.currentTimeMillis)
      if (left <= renewEvery) {
        yield* Effect.sleep(Duration.millis(Math.max(0, left)))
        return { _tag: "DeadlineReached" } as const
      }
      yield* Effect.sleep(Duration.millis(renewEvery))
      const held = yield* deps.leases.renew(item).pipe(
        Effect.catchAll((error) => Effect.as(Effect.logWarning("work lease renewal failed", error), true))
      )
      if (!held) return { _tag: "LeaseLost" } as const
    }
  })

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

/**
 * Runs one claimed attempt to its recorded outcome; returns the next item when the success was
 * recorded together with a new claim. Must run uninterruptibly: only the handler runs inside
 * `restore`, and when it is interrupted there (shutdown) the lease is released — back to
 * `queued` with the attempt withdrawn — before the interruption goes on.
 */
export const makeAttempt =
  (deps: AttemptDeps) =>
  (item: ClaimedItem, restore: Restore): Effect.Effect<Option.Option<ClaimedItem>> =>
    Effect.gen(function* () {
      yield* recordClaim(item)
      const handler = yield* deps.registry.get(item.kind)
      if (Option.isNone(handler)) {
        // Unregistered between claim and run: give it back untouched.
        yield* deps.leases.release(item).pipe(Effect.retry(writeRetry), Effect.ignoreLogged)
        return Option.none()
      }
      const outcome = yield* restore(
        Effect.race(runHandler(handler.value, item, deps.options.workerId), guard(deps, item))
      ).pipe(
        Effect.onInterrupt(() =>
          deps.leases.release(item).pipe(
            Effect.tap((released) => (released ? Effect.logInfo("work lease released") : Effect.void)),
            Effect.retry(writeRetry),
            Effect.catchAll((error) => Effect.logWarning("work lease release failed; it will expire instead", error))
          )
        )
      )
      return yield* record(deps, item, outcome).pipe(
        Effect.retry(writeRetry),
        Effect.tap((written) => report(outcome, written)),
        Effect.tap((written) => recordOutcome(item.kind, written.recorded)),
        Effect.map((written) => written.next),
        Effect.catchAll((error) =>
          Effect.as(
            Effect.logError("work outcome could not be recorded; the lease will expire and the item be retried", error),
            Option.none<ClaimedItem>()
          )
        )
      )
    }).pipe(
      Effect.withSpan("work.attempt", {
        attributes: { kind: item.kind, id: item.id, attempt: item.attempt },
        captureStackTrace: false
      }),
      Effect.annotateLogs({ workId: item.id, workKind: item.kind, workAttempt: item.attempt })
    )
