/**
 * The first lines `npm start` prints, for someone who has never run it: where the API and the
 * console are, how to sign in (the administrator's email and the file that holds the password,
 * never the password) and where the bootstrap key file is (`svc login --key-file`).
 */
import { devSecretFiles, type StartupConfig } from "@svc/core/config"
import { Effect, Option } from "effect"
import * as path from "node:path"
import type { BootstrapInput } from "../bootstrap/initializer.js"

const passwordSource = (config: StartupConfig, input: BootstrapInput): string => {
  if (input.env === "production") return `the password file ${input.passwordPath} (written by the first bootstrap only)`
  return Option.isSome(config.process.bootstrap.devAdminPassword)
    ? "the password set in SVC_DEV_ADMIN_PASSWORD"
    : `the password in ${path.join(config.process.dataDir, devSecretFiles.devAdminPassword)}`
}

export const welcome = (config: StartupConfig, input: BootstrapInput): Effect.Effect<void> => {
  const { baseUrl, dataDir, host, port } = config.process
  const url = `http://${host}:${port}`
  const consoleUrl = `${baseUrl}/console/`
  return Effect.all([
    Effect.logInfo(`svc starting at ${url}`).pipe(Effect.annotateLogs({ url, baseUrl, dataDir })),
    Effect.logInfo(`console: ${consoleUrl}`).pipe(Effect.annotateLogs({ consoleUrl })),
    Effect.logInfo(`sign in as ${input.adminEmail} with ${passwordSource(config, input)}`).pipe(
      Effect.annotateLogs({ adminEmail: input.adminEmail })
    ),
    Effect.logInfo(`bootstrap key file (svc login --url ${baseUrl} --key-file <it>): ${input.keyPath}`).pipe(
      Effect.annotateLogs({ keyPath: input.keyPath })
    )
  ], { discard: true })
}
