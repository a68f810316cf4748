/**
 * Selecting the Secret Driver at start-up (DESIGN §10): over the configured key, or not at all.
 * A process wired without the key must stop (main.ts: exit 78 through `loadOrExit`) rather than
 * seal Secrets with a random key that no restart or other replica could reveal.
 */
import { describe, expect, it } from "@effect/vitest"
import { defaultInstallationConfig, formatStartupError } from "@svc/core/config"
import { makeBuiltinSecretDriver, SecretDriver, selectSecretDriver } from "@svc/core/drivers/secret"
import { ConfigError, Effect, Either, Exit, Layer, Redacted } from "effect"
import { randomBytes } from "node:crypto"

const installation = defaultInstallationConfig

describe("Secret Driver selection", () => {
  it.effect("without SVC_SECRET_KEY it fails with a configuration error naming the variable, and no driver is built", () =>
    Effect.gen(function* () {
      for (const process of [{}, { secrets: {} }, { secrets: { secretKey: undefined }, previousSecretKeys: [] }]) {
        const selected = yield* Effect.either(selectSecretDriver({ process, installation }))
        expect(Either.isLeft(selected)).toBe(true)
        if (Either.isRight(selected)) continue
        expect(ConfigError.isMissingData(selected.left)).toBe(true)
        expect(formatStartupError(selected.left)).toMatch(/^SVC_SECRET_KEY: /)
      }
      const wired = Layer.unwrapEffect(selectSecretDriver({ process: {}, installation }))
      const exit = yield* Effect.exit(Effect.provide(SecretDriver, wired))
      expect(Exit.isFailure(exit)).toBe(true)
    }))

  it.effect("with the key, the selected driver seals with it: a driver over the same key reveals the value", () =>
    Effect.gen(function* () {
      const current = Redacted.make(new Uint8Array(randomBytes(32)))
      const previous = Redacted.make(new Uint8Array(randomBytes(32)))
      const layer = yield* selectSecretDriver({ process: { secrets: { secretKey: current }, previousSecretKeys: [previous] }, installation })
      const driver = yield* Effect.provide(SecretDriver, layer)
      const sealed = yield* driver.seal(Redacted.make("value"))
      const revealed = yield* makeBuiltinSecretDriver({ current }).reveal(sealed)
      expect(Redacted.value(revealed)).toBe("value")
      // SVC_SECRET_KEY_PREVIOUS still reveals what the previous key sealed.
      const old = yield* makeBuiltinSecretDriver({ current: previous }).seal(Redacted.make("old"))
      expect(Redacted.value(yield* driver.reveal(old))).toBe("old")
    }))
})
