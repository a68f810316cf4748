import { Effect, Layer, Option, Redacted } from "effect"
import { randomBytes } from "node:crypto"
import { ProcessConfiguration } from "../../config/index.js"
import { builtinSecretDriverLayer } from "./builtin.js"
import { SecretDriver } from "./driver.js"

/**
 * The Secret Driver a process uses: one already provided (tests), else the `builtin` driver over
 * `SVC_SECRET_KEY` and `SVC_SECRET_KEY_PREVIOUS` from the ProcessConfiguration (every real
 * process has one), else — only for in-process test servers without a process configuration —
 * the builtin driver over a random key that lives as long as the layer.
 */
export const secretDriverFromConfiguration: Layer.Layer<SecretDriver> = Layer.unwrapEffect(
  Effect.gen(function* () {
    const provided = yield* Effect.serviceOption(SecretDriver)
    if (Option.isSome(provided)) return Layer.succeed(SecretDriver, provided.value)
    const config = yield* Effect.serviceOption(ProcessConfiguration)
    if (Option.isSome(config) && config.value.secrets !== undefined) {
      return builtinSecretDriverLayer({ current: config.value.secrets.secretKey, previous: config.value.previousSecretKeys ?? [] })
    }
    return builtinSecretDriverLayer({ current: Redacted.make(new Uint8Array(randomBytes(32))) })
  })
)
