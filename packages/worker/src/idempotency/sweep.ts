/**
 * Idempotency keys live 24 hours (DESIGN §18); every worker deletes the expired ones at start
 * and then every `interval`. Deleting is idempotent, so replicas need no coordination, and the
 * API never replays an expired row even before it is swept (it judges expiry itself).
 */
import { IdempotencyKeysRepo } from "@svc/core/db"
import { Cause, Duration, Effect, Layer, Schedule } from "effect"
import { withExportedSpan } from "@svc/core/observability"

/** One sweep: the number of expired keys deleted. */
export const sweepIdempotencyKeys = Effect.gen(function* () {
  const repo = yield* IdempotencyKeysRepo
  const deleted = yield* repo.sweepExpired
  if (deleted > 0) yield* Effect.logInfo("idempotency keys: expired keys deleted", { deleted })
  return deleted
}).pipe(withExportedSpan("Idempotency.sweep"))

export const IdempotencySweepLive = (interval: Duration.DurationInput = Duration.minutes(10)) =>
  Layer.scopedDiscard(
    sweepIdempotencyKeys.pipe(
      Effect.catchAllCause((cause) => Effect.logWarning("idempotency keys: sweep failed", Cause.pretty(cause))),
      Effect.repeat(Schedule.spaced(interval)),
      Effect.annotateLogs({ fiber: "idempotency.sweep" }),
      Effect.forkScoped
    )
  ).pipe(Layer.provide(IdempotencyKeysRepo.Default))
