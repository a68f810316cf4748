import { ProcessConfiguration } from "@svc/core/config"
import { builtinSecretDriverLayer, SecretDriver } from "@svc/core/drivers/secret"
import { Effect, Layer, Option, Redacted } from "effect"
import { randomBytes } from "node:crypto"

/**
 * The Secret Driver the API uses: one already provided (tests), else the `builtin` driver over
 * `SVC_SECRET_KEY` (and `SVC_SECRET_KEY_PREVIOUS`) from the ProcessConfiguration (every process: `ApiServerLive` requires it),
 * else — only when the API groups run without a process configuration, i.e. in-process test
 * servers — the builtin driver over a random key that lives as long as the layer.
 */
export const secretDriverFromConfiguration: Layer.Layer<SecretDriver> = Layer.unwrapEffect(
  Effect.gen(function* () {
    const provided = yield* Effect.serviceOption(SecretDriver)
    if (Option.isSome(provided)) return Layer.succeed(SecretDriver, provided.value)
    const config = yield* Effect.serviceOption(ProcessConfiguration)
    if (Option.isSome(config)) return builtinSecretDriverLayer({
        current: config.value.secrets.secretKey,
        previous: config.value.previousSecretKeys
      })
    return builtinSecretDriverLayer({ current: Redacted.make(new Uint8Array(randomBytes(32))) })
  })
)
