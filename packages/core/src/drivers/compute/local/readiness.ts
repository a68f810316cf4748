/**
 * A gateway's health over loopback: `/healthz` (the process serves HTTP) and `/readyz` (ready for
 * work), both unauthenticated. Readiness waits for both until a deadline, and stops waiting as soon
 * as the process is gone.
 */
import { Duration, Effect, Schedule } from "effect"

export interface HealthProbe {
  readonly live: boolean
  readonly ready: boolean
}

const answers200 = (url: string): Effect.Effect<boolean> =>
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
  | { readonly _tag: "TimedOut" }

/**
 * Polls until `/readyz` answers 200, the process exits (`exited` completes) or `timeout` passes.
 */
export const awaitReady = (
  port: number,
  options: { readonly timeout: Duration.DurationInput; readonly exited: Effect.Effect<{ readonly code: number | null }> }
): Effect.Effect<Readiness> => {
  const ready = probeHealth(port).pipe(
    Effect.repeat({ schedule: Schedule.spaced(Duration.millis(500)), until: (health) => health.ready }),
    Effect.as<Readiness>({ _tag: "Ready" })
  )
  const exited = options.exited.pipe(Effect.map((exit): Readiness => ({ _tag: "Exited", code: exit.code })))
  return Effect.raceFirst(ready, exited).pipe(
    Effect.timeoutTo({
      duration: options.timeout,
      onSuccess: (readiness) => readiness,
      onTimeout: (): Readiness => ({ _tag: "TimedOut" })
    })
  )
}
