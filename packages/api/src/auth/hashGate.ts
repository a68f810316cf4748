import { Context, Data, Effect, Ref } from "effect"

/**
 * A bound on password checking (issue 10 §3): each argon2 check costs tens of milliseconds of
 * CPU and 19 MiB, and each sign-in a few statements on the shared connection pool, so an
 * unbounded flood of sign-ins starves every other request of the process. At most
 * `concurrency` checks run at once and at most `queue` more wait; beyond that one is refused at
 * once with `HashingBusy` (answered 503 `DEPENDENCY_UNAVAILABLE` with `Retry-After`), so
 * authenticated traffic keeps its latency. One gate per server, made when its layer is built.
 */
export interface PasswordHashLimits {
  readonly concurrency: number
  readonly queue: number
}

/** More password checks are running or waiting than the limits allow. */
export class HashingBusy extends Data.TaggedError("HashingBusy")<{ readonly retryAfterSeconds: number }> {}

/** A full queue drains within about a second at tens of milliseconds per check and core. */
const RETRY_AFTER_SECONDS = 1

export interface HashGateShape {
  readonly run: <A, E, R>(check: Effect.Effect<A, E, R>) => Effect.Effect<A, E | HashingBusy, R>
}

export class HashGate extends Context.Tag("@svc/api/HashGate")<HashGate, HashGateShape>() {}

export const makeHashGate = (limits: PasswordHashLimits): Effect.Effect<HashGateShape> =>
  Effect.gen(function* () {
    const running = yield* Effect.makeSemaphore(limits.concurrency)
    // Checks running or waiting for a permit; admission and release are exact under interruption.
    const admitted = yield* Ref.make(0)
    const admit = Effect.flatMap(
      Ref.modify(admitted, (n) => (n < limits.concurrency + limits.queue ? [true, n + 1] : [false, n])),
      (ok) => (ok ? Effect.void : Effect.fail(new HashingBusy({ retryAfterSeconds: RETRY_AFTER_SECONDS })))
    )
    const leave = Ref.update(admitted, (n) => n - 1)
    return {
      run: (check) => Effect.acquireUseRelease(admit, () => running.withPermits(1)(check), () => leave)
    }
  })
