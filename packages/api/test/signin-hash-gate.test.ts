import { SqlClient } from "@effect/sql"
import { describe, expect, it, layer } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber, Layer } from "effect"
import { HashingBusy, makeHashGate } from "../src/auth/hashGate.js"
import { LogCapture, TestServer } from "../../../testing/server.js"
import { accountsTestLayer, expectError, setCookieOf, signIn } from "./support/accountsServer.js"

describe("the password hash gate (issue 10 §3)", () => {
  it.effect("runs `concurrency` checks, queues `queue` more, refuses the next at once", () =>
    Effect.gen(function* () {
      const gate = yield* makeHashGate({ concurrency: 1, queue: 1 })
      const release = yield* Deferred.make<void>()
      const started = yield* Deferred.make<void>()
      const running = yield* Effect.fork(gate.run(Effect.zipRight(Deferred.succeed(started, undefined), Deferred.await(release))))
      yield* Deferred.await(started)
      const queued = yield* Effect.fork(gate.run(Effect.succeed("queued ran")))
      yield* Effect.yieldNow()
      expect(yield* Effect.exit(gate.run(Effect.succeed("refused")))).toEqual(Exit.fail(new HashingBusy({ retryAfterSeconds: 1 })))
      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(running)
      expect(yield* Fiber.join(queued)).toBe("queued ran")
      // Both left: the gate admits again, and an interrupted waiter gives its place back.
      expect(yield* gate.run(Effect.succeed("again"))).toBe("again")
      const hold = yield* Deferred.make<void>()
      const holder = yield* Effect.fork(gate.run(Deferred.await(hold)))
      yield* Effect.yieldNow()
      const waiter = yield* Effect.fork(gate.run(Effect.void))
      yield* Effect.yieldNow()
      yield* Fiber.interrupt(waiter)
      const third = yield* Effect.fork(gate.run(Effect.succeed("third")))
      yield* Deferred.succeed(hold, undefined)
      yield* Fiber.join(holder)
      expect(yield* Fiber.join(third)).toBe("third")
    }))
})

// The smallest bounds: one check at a time, none waiting, so a parallel burst overflows the gate.
describe("sign-in over the hashing bound", () => {
  layer(accountsTestLayer({ passwordHashing: { concurrency: 1, queue: 0 } }).pipe(Layer.provideMerge(LogCapture.layer)), {
    timeout: 120_000,
    excludeTestServices: true
  })((it) => {
    it.effect("answers 503 DEPENDENCY_UNAVAILABLE with Retry-After: 1, and counts no failure for it", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        // Distinct emails, so the throttle admits every one of them.
        const results = yield* Effect.all(
          Array.from({ length: 40 }, (_, i) => signIn(baseUrl, `busy-${i}@example.test`, "a wrong password here")),
          { concurrency: "unbounded" }
        )
        const busy = results.filter((r) => r.status === 503)
        expect(busy.length).toBeGreaterThan(0)
        for (const result of results) {
          if (result.status === 503) {
            expectError(result, 503, "DEPENDENCY_UNAVAILABLE")
            expect(result.body.error.message).toBe("Sign-in is busy; retry later.")
            expect(result.headers.get("retry-after")).toBe("1")
          } else {
            expectError(result, 401, "UNAUTHENTICATED")
            expect(result.headers.get("retry-after")).toBeNull()
          }
          expect(setCookieOf(result)).toBeNull()
        }
        // A refused check evaluated nothing: only the 401s are failures.
        const sql = yield* SqlClient.SqlClient
        const rows = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM sign_in_failures`
        expect(rows[0]!.n).toBe(results.length - busy.length)
      }))
  })
})
