/** Polling for end-to-end tests that wait on real processes. */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * How long a wait may last. A number is a fixed budget in seconds. `Progressing` waits as long as
 * the system keeps moving: it dies only when `progress` (state the worker changes while it works,
 * not the response read, whose request id always differs) did not change for `stallSeconds`, so a
 * slow, busy host makes a test slower, never red.
 */
export interface Progressing<R> {
  readonly progress: Effect.Effect<unknown, never, R>
  readonly stallSeconds?: number
}

/**
 * Polls until `done`, or dies when the budget is spent (`explain` adds context). The pause between
 * reads is a real timer even inside `it.effect`, whose TestClock would otherwise never let
 * `Effect.sleep` end: the processes polled run on wall-clock time.
 */
export const until = <A, E, R, R2 = never>(
  read: Effect.Effect<A, E, R>,
  done: (a: A) => boolean,
  budget: number | Progressing<R2> = 300,
  explain: () => string = () => ""
) =>
  Effect.gen(function* () {
    const stallMs = (typeof budget === "number" ? budget : budget.stallSeconds ?? 180) * 1000
    const progress = typeof budget === "number" ? Effect.succeed(undefined) : budget.progress
    let seen = ""
    let movedAt = Date.now()
    for (;;) {
      const value = yield* read
      if (done(value)) return value
      // With a fixed budget nothing counts as progress: the deadline is the start plus the budget.
      const now = typeof budget === "number" ? "" : JSON.stringify(yield* progress)
      if (now !== seen) {
        seen = now
        if (typeof budget !== "number") movedAt = Date.now()
      }
      if (Date.now() - movedAt > stallMs) {
        const how = typeof budget === "number" ? `not reached in ${budget} s` : `no progress for ${stallMs / 1000} s`
        return yield* Effect.dieMessage(`${how}: ${JSON.stringify(value).slice(0, 500)}${explain()}`)
      }
      yield* realPause
    }
  })

const realPause = Effect.async<void>((resume) => {
  const timer = setTimeout(() => resume(Effect.void), 250)
  return Effect.sync(() => clearTimeout(timer))
})

/**
 * The progress of the work items with `key` (a deployment's revision id, an Agent id): their
 * state, attempts and lease, which the worker renews while an attempt runs.
 */
export const workItemProgress = (key: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`SELECT kind, state, attempt_count, lease_expires_at, last_attempt_code FROM work_items WHERE key = ${key} ORDER BY kind`
  ).pipe(Effect.orDie)
