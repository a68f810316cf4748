import { Duration, Effect, Random } from "effect"

export interface Backoff {
  readonly base: Duration.Duration
  readonly cap: Duration.Duration
}

/** The largest delay before retrying after `attempt` (1-based): `min(cap, base * 2^(attempt-1))`. */
export const backoffCeiling = (backoff: Backoff, attempt: number): Duration.Duration => {
  const exponent = Math.min(Math.max(attempt - 1, 0), 52)
  const millis = Math.min(Duration.toMillis(backoff.cap), Duration.toMillis(backoff.base) * 2 ** exponent)
  return Duration.millis(millis)
}

/**
 * Exponential backoff with full jitter: a uniformly random delay in `[0, ceiling)`, so replicas
 * retrying the same failure spread out instead of hitting the dependency together.
 */
export const backoffDelay = (backoff: Backoff, attempt: number): Effect.Effect<Duration.Duration> =>
  Effect.map(Random.next, (fraction) =>
    Duration.millis(Math.floor(fraction * Duration.toMillis(backoffCeiling(backoff, attempt))))
  )
