/**
 * A gateway's health over loopback: `/healthz` (the process serves HTTP) and `/readyz` (ready for
 * work), both unauthenticated. Readiness waits for both while the gateway makes progress, and stops
 * waiting as soon as the process is gone.
 */
import { Clock, Duration, Effect, Schedule } from "effect"

export interface HealthProbe {
  readonly live: boolean
  readonly ready: boolean
}

export const answers200 = (url: string): Effect.Effect<boolean> =>
  Effect.tryPromise(async (signal) => {
    const response = await fetch(url, { signal })
    await response.arrayBuffer()
    return response.status === 200
  }).pipe(
    Effect.timeout(Duration.seconds(3)),
    Effect.orElseSucceed(() => false)
  )

export const probeHealth = (port: number): Effect.Effect<HealthProbe> =>
  Effect.gen(function* () {
    const live = yield* answers200(`http://127.0.0.1:${port}/healthz`)
    const ready = live && (yield* answers200(`http://127.0.0.1:${port}/readyz`))
    return { live, ready }
  })

export type Readiness =
  | { readonly _tag: "Ready" }
  | { readonly _tag: "Exited"; readonly code: number | null }
  | { readonly _tag: "TimedOut"; readonly reason: "stalled" | "limit" }

export interface ReadinessBudget {
  /** The hard cap, however busy the host is. */
  readonly limit: Duration.DurationInput
  /** Gives up sooner when `progress` has not grown for this long: the start is stuck. */
  readonly stall: Duration.DurationInput
  /** A count that grows while the gateway works (its CPU time); sampled every two seconds. */
  readonly progress: Effect.Effect<number>
}

/** Completes when `progress` has not grown for `stall`. */
const stalled = (progress: Effect.Effect<number>, stall: Duration.DurationInput): Effect.Effect<Readiness> =>
  Effect.gen(function* () {
    const stallMs = Duration.toMillis(stall)
    let last = yield* progress
    let since = yield* Clock.currentTimeMillis
    for (;;) {
      yield* Effect.sleep(Duration.seconds(2))
      const now = yield* Clock.currentTimeMillis
      const current = yield* progress
      if (current > last) {
        last = current
        since = now
      } else if (now - since >= stallMs) {
        return { _tag: "TimedOut", reason: "stalled" } as const
      }
    }
  })

/**
 * Polls until `/readyz` answers 200, the process exits (`exited` completes), the gateway stops
 * making progress for `budget.stall`, or `budget.limit` passes. A gateway that keeps using CPU is
 * waited for up to the limit: on a loaded host a start can take minutes, and replacing a slow
 * gateway with a fresh one only starts the wait over.
 */
export const awaitReady = (
  port: number,
  options: { readonly budget: ReadinessBudget; readonly exited: Effect.Effect<{ readonly code: number | null }> }
): Effect.Effect<Readiness> => {
  const ready = probeHealth(port).pipe(
    Effect.repeat({ schedule: Schedule.spaced(Duration.millis(500)), until: (health) => health.ready }),
    Effect.as<Readiness>({ _tag: "Ready" })
  )
  const exited = options.exited.pipe(Effect.map((exit): Readiness => ({ _tag: "Exited", code: exit.code })))
  return Effect.raceAll([ready, exited, stalled(options.budget.progress, options.budget.stall)]).pipe(
    Effect.timeoutTo({
      duration: options.budget.limit,
      onSuccess: (readiness) => readiness,
      onTimeout: (): Readiness => ({ _tag: "TimedOut", reason: "limit" })
    })
  )
}
