/**
 * `svc credential-service`: the credential service process (SPEC 4.8, DESIGN §12). It serves
 * its private control interface on a mode-0600 Unix socket; sessions live in PostgreSQL.
 */
import { HttpServer } from "@effect/platform"
import { NodeRuntime } from "@effect/platform-node"
import { loadOrExit } from "@svc/core/config"
import { databaseLayer, RepositorySessionsRepo } from "@svc/core/db"
import { httpPipeline } from "@svc/core/http"
import { Limits } from "@svc/core/schema"
import { processLayer, requireDatabaseUrl, startupConfig } from "@svc/core/runtime"
import { Effect, Layer, Option } from "effect"
import { credentialServiceConfig, requireRegistry } from "./config.js"
import { ControlApi, ControlLive } from "./controlApi.js"
import { controlSocketServer } from "./controlSocket.js"
import { Sessions } from "./sessions/service.js"
import { CredentialSettings } from "./settings.js"

const CredentialServiceProcess = Layer.unwrapEffect(
  Effect.gen(function* () {
    const config = yield* startupConfig
    const registry = yield* loadOrExit(requireRegistry(config))
    const url = yield* requireDatabaseUrl(config, "credential-service")
    const options = yield* loadOrExit(credentialServiceConfig(config))
    const listenerUrl = Option.getOrElse(options.publicUrl, () => `http://${options.listenHost}:${options.listenPort}`)
    const listening = Layer.effectDiscard(
      HttpServer.addressFormattedWith((address) =>
        Effect.logInfo(`credential service control interface on ${address}`).pipe(
          Effect.annotateLogs({ socketPath: options.socketPath })
        )
      )
    )
    const sessions = Sessions.Default.pipe(
      Layer.provide(RepositorySessionsRepo.Default),
      Layer.provide(Layer.succeed(CredentialSettings, { registry, listenerUrl }))
    )
    return Layer.merge(
      httpPipeline(ControlApi, ControlLive, { development: false, maxBodyBytes: Limits.controlInterfaceBodyBytes }),
      listening
    ).pipe(
      Layer.provide(sessions),
      Layer.provide(controlSocketServer(options.socketPath)),
      Layer.provide(databaseLayer({ url, applicationName: "svc-credential-service" })),
      Layer.provide(processLayer(config))
    )
  })
)

CredentialServiceProcess.pipe(Layer.launch, (main) => NodeRuntime.runMain(main, { disablePrettyLogger: true }))
