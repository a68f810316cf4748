/**
 * `svc credential-service`: the credential service process (SPEC 4.8, DESIGN §12). It serves
 * its private control interface on a mode-0600 Unix socket; sessions live in PostgreSQL.
 */
import { HttpServer } from "@effect/platform"
import { NodeRuntime } from "@effect/platform-node"
import { DevUpstreamsConfig, loadOrExit } from "@svc/core/config"
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
import { listenerLayer } from "./listener/server.js"
import { loadAppKey } from "./upstream/appKey.js"
import { makeCodeHostClient } from "./upstream/codeHost.js"
import { makeRepositoryMetadata, RepositoryMetadata } from "./upstream/repositoryMetadata.js"
import { makeTokenCache, revokeAtShutdown, revokeEndedSessions, SessionTokens } from "./upstream/tokenCache.js"

const CredentialServiceProcess = Layer.unwrapEffect(
  Effect.gen(function* () {
    const config = yield* startupConfig
    const registry = yield* loadOrExit(requireRegistry(config))
    const url = yield* requireDatabaseUrl(config, "credential-service")
    const options = yield* loadOrExit(credentialServiceConfig(config))
    const appKey = yield* loadOrExit(loadAppKey)
    const overrides = yield* loadOrExit(DevUpstreamsConfig)
    const client = makeCodeHostClient(registry, appKey, overrides)
    const listenerUrl = Option.getOrElse(options.publicUrl, () => `http://${options.listenHost}:${options.listenPort}`)
    const listening = Layer.effectDiscard(
      HttpServer.addressFormattedWith((address) =>
        Effect.logInfo(`credential service control interface on ${address}`).pipe(
          Effect.annotateLogs({ socketPath: options.socketPath })
        )
      )
    )
    // Released after the listener and the control interface have closed: nothing mints any more.
    // The check for sessions ended elsewhere stops before the shutdown revocation (finalizers run
    // in reverse).
    const tokens = Layer.scoped(
      SessionTokens,
      Effect.flatMap(RepositorySessionsRepo, (repo) => makeTokenCache(client, repo)).pipe(
        Effect.tap((cache) => Effect.addFinalizer(() => revokeAtShutdown(cache))),
        Effect.tap((cache) => Effect.forkScoped(revokeEndedSessions(cache)))
      )
    )
    const listener = listenerLayer({
      host: options.listenHost,
      port: options.listenPort,
      listenerUrl,
      client
    })
    const sessions = Sessions.Default.pipe(
      Layer.provide(Layer.succeed(CredentialSettings, { registry, listenerUrl }))
    )
    return Layer.mergeAll(
      httpPipeline(ControlApi, ControlLive, { development: false, maxBodyBytes: Limits.controlInterfaceBodyBytes }),
      listening,
      listener
    ).pipe(
      Layer.provide(sessions),
      Layer.provide(Layer.succeed(RepositoryMetadata, makeRepositoryMetadata(registry, client))),
      Layer.provide(controlSocketServer(options.socketPath)),
      Layer.provideMerge(tokens),
      Layer.provideMerge(RepositorySessionsRepo.Default),
      Layer.provide(databaseLayer({ url, applicationName: "svc-credential-service" })),
      Layer.provide(processLayer(config))
    )
  })
)

CredentialServiceProcess.pipe(Layer.launch, (main) => NodeRuntime.runMain(main, { disablePrettyLogger: true }))
