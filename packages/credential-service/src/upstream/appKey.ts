/**
 * The code-host App's private key (DESIGN §12): a mounted PEM file named by
 * `SVC_CODEHOST_APP_KEY_PATH`, read once at start-up, never in the Installation configuration.
 * A missing or unusable key stops the process with exit 78.
 */
import { Config, ConfigError, Effect, Either } from "effect"
import { createPrivateKey, type KeyObject } from "node:crypto"
import * as fs from "node:fs"

export const AppKeyConfig: Config.Config<KeyObject> = Config.string("SVC_CODEHOST_APP_KEY_PATH").pipe(
  Config.mapOrFail((file) => {
    if (!file.startsWith("/")) return Either.left(ConfigError.InvalidData(["SVC_CODEHOST_APP_KEY_PATH"], "must be an absolute path"))
    let pem: string
    try {
      pem = fs.readFileSync(file, "utf8")
    } catch {
      return Either.left(ConfigError.InvalidData(["SVC_CODEHOST_APP_KEY_PATH"], `cannot read ${file}`))
    }
    try {
      const key = createPrivateKey(pem)
      return key.asymmetricKeyType === "rsa"
        ? Either.right(key)
        : Either.left(ConfigError.InvalidData(["SVC_CODEHOST_APP_KEY_PATH"], "must hold an RSA private key (PEM)"))
    } catch {
      return Either.left(ConfigError.InvalidData(["SVC_CODEHOST_APP_KEY_PATH"], "must hold an RSA private key (PEM)"))
    }
  })
)

export const loadAppKey = Effect.suspend(() => AppKeyConfig)
