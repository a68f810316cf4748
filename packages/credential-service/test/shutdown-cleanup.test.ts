/**
 * SPEC 8 "shutdown cleanup 60 s": at shutdown the credential service revokes the tokens it holds,
 * and gives up after 60 s (what is left expires upstream). The revocation itself against the
 * loopback code host is in listener-git.test.ts; here the bound, on the test clock.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Logger, Option, TestClock } from "effect"
import { revokeAtShutdown, type TokenCache } from "../src/upstream/tokenCache.js"

const capture = (messages: Array<string>) =>
  Logger.replace(Logger.defaultLogger, Logger.make(({ message }) => void messages.push(String(message))))

const cache = (revokeAll: TokenCache["revokeAll"]): TokenCache => ({
  tokenFor: () => Effect.never,
  revokeFor: () => Effect.never,
  revokeAll,
  revokeEnded: Effect.never
})

describe("shutdown cleanup", () => {
  it.effect("a code host that never answers is given 60 s, then the cleanup ends with a warning", () =>
    Effect.gen(function* () {
      const messages: Array<string> = []
      const fiber = yield* Effect.fork(revokeAtShutdown(cache(Effect.never)).pipe(Effect.provide(capture(messages))))
      yield* TestClock.adjust("59 seconds")
      expect(Option.isNone(yield* Fiber.poll(fiber))).toBe(true)
      yield* TestClock.adjust("1 second")
      yield* Fiber.join(fiber)
      expect(messages).toEqual(["shutdown cleanup: cut off after 60 s"])
    }))

  it.effect("failed revocations are reported, not raised", () =>
    Effect.gen(function* () {
      const messages: Array<string> = []
      yield* revokeAtShutdown(cache(Effect.succeed({ revoked: 1, failed: 2 }))).pipe(Effect.provide(capture(messages)))
      expect(messages).toEqual(["shutdown cleanup: some revocations failed"])
    }))
})
