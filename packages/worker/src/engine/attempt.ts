import type { SqlError } from "@effect/sql/SqlError"
import { Cause, Duration, Effect, Exit, Option, Schedule } from "effect"
import { backoffDelay } from "./backoff.js"
import { recordableCode, recordableMessage, WorkCodes, WorkMessages } from "./failure.js"
import type { HandlerContext, RegisteredHandler, WorkHandlersRegistry } from "./handlers.js"
import type { ClaimedItem, Leases } from "./leases.js"
import type { ResolvedOptions } from "./options.js"
import type { Outcomes, Recorded } from "./outcomes.js"

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
      return Effect.logError("work handler died", exit.cause).pipe(
        Effect.as<Outcome>({
          _tag: "Failed",
          code: WorkCodes.INTERNAL_ERROR,
          message: WorkMessages.INTERNAL_ERROR,
          permanent: false
        })
      )
    })
  )

/**
 * Renews the lease every `leaseRenewInterval` while the handler runs; completes only when the
 * lease is found lost (another worker may now own the item). A failed renewal (database
 * unreachable) is retried at the next interval: the fence decides, not the error.
 */
const watchLease = (deps: AttemptDeps, item: ClaimedItem): Effect.Effect<Outcome> =>
  deps.leases.renew(item).pipe(
    Effect.catchAll((error) => Effect.logWarning("work lease renewal failed", error).pipe(Effect.as(true))),
    Effect.delay(deps.options.leaseRenewInterval),
    Effect.repeat({ while: (held) => held }),
    Effect.as<Outcome>({ _tag: "LeaseLost" })
  )

const deadlineTimer = (item: ClaimedItem): Effect.Effect<Outcome> =>
  Effect.sleep(Duration.millis(Math.max(0, item.deadlineAt.getTime() - item.claimedAt.getTime()))).pipe(
    Effect.as<Outcome>({ _tag: "DeadlineReached" })
  )

const record = (deps: AttemptDeps, item: ClaimedItem, outcome: Outcome): Effect.Effect<void> => {
  const write: Effect.Effect<Recorded | null, SqlError> = (() => {
    switch (outcome._tag) {
      case "Succeeded":
        return deps.outcomes.succeed(item)
      case "Failed":
        return outcome.permanent
          ? deps.outcomes.fail(item, outcome)
          : Effect.flatMap(backoffDelay(deps.options.backoff, item.attempt), (delay) =>
              deps.outcomes.retry(item, outcome, delay)
            )
      case "DeadlineReached":
        return deps.outcomes.fail(item, { code: WorkCodes.DEADLINE_EXCEEDED, message: WorkMessages.DEADLINE_EXCEEDED })
      case "LeaseLost":
        return Effect.succeed(null)
    }
  })()
  return write.pipe(
    Effect.retry(writeRetry),
    Effect.flatMap((recorded) => {
      if (recorded === null) return Effect.logWarning("work lease lost during the attempt; its outcome is discarded")
      if (recorded._tag === "Fenced") return Effect.logWarning("work lease lost before the outcome was recorded")
      const detail = outcome._tag === "Failed" ? { code: outcome.code } : {}
      return outcome._tag === "Succeeded"
        ? Effect.logDebug("work attempt succeeded")
        : Effect.logWarning(`work attempt ended: ${outcome._tag}, item ${recorded.state}`, detail)
    }),
    Effect.catchAll((error) =>
      Effect.logError("work outcome could not be recorded; the lease will expire and the item be retried", error)
    ),
    Effect.uninterruptible
  )
}

/**
 * Runs one claimed attempt to its recorded outcome. Interrupting it (shutdown) interrupts the
 * handler; the caller then releases the lease.
 */
export const makeAttemptRunner =
  (deps: AttemptDeps) =>
  (item: ClaimedItem): Effect.Effect<void> =>
    Effect.gen(function* () {
      const handler = yield* deps.registry.get(item.kind)
      if (Option.isNone(handler)) {
        // Unregistered between claim and run: give it back untouched.
        yield* deps.leases.release(item).pipe(Effect.retry(writeRetry), Effect.ignoreLogged)
        return
      }
      // Once the handler has finished, its outcome is recorded even if shutdown begins meanwhile.
      yield* Effect.uninterruptibleMask((restore) =>
        restore(
          Effect.raceAll([
            runHandler(handler.value, item, deps.options.workerId),
            watchLease(deps, item),
            deadlineTimer(item)
          ])
        ).pipe(Effect.flatMap((outcome) => record(deps, item, outcome)))
      )
    }).pipe(
      Effect.withSpan("work.attempt", { attributes: { kind: item.kind, id: item.id, attempt: item.attempt } }),
      Effect.annotateLogs({ workId: item.id, workKind: item.kind, workAttempt: item.attempt })
    )
