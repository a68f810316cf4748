/**
 * `svc credential-service`: the credential service process. This foundation serves its private
 * control interface (SPEC 4.8) on a mode-0600 Unix socket; sessions and the client listener
 * come with the repository-credentials capability.
 */
import { HttpServer } from "@effect/platform"
import { NodeRuntime } from "@effect/platform-node"
import { httpPipeline } from "@svc/core/http"
import { Limits } from "@svc/core/schema"
import { processLayer, startupConfig } from "@svc/core/runtime"
import { Config, Effect, Layer } from "effect"
import * as path from "node:path"
import { ControlApi, ControlLive } from "./controlApi.js"
import { controlSocketServer } from "./controlSocket.js"

const CredentialServiceProcess = Layer.unwrapEffect(
  Effect.gen(function* () {
    const config = yield* startupConfig
    const socketPath = yield* Config.string("SVC_CREDENTIAL_CONTROL_SOCKET").pipe(
      Config.withDefault(path.join(config.process.dataDir, "credential-service", "control.sock")),
      Config.map((p) => path.resolve(p))
    )
    const listening = Layer.effectDiscard(
      HttpServer.addressFormattedWith((address) =>
        Effect.logInfo(`credential service control interface on ${address}`).pipe(Effect.annotateLogs({ socketPath }))
      )
    )
    return Layer.merge(
      httpPipeline(ControlApi, ControlLive, { development: false, maxBodyBytes: Limits.controlInterfaceBodyBytes }),
      listening
    ).pipe(Layer.provide(controlSocketServer(socketPath)), Layer.provide(processLayer(config)))
  })
)

CredentialServiceProcess.pipe(Layer.launch, (main) => NodeRuntime.runMain(main, { disablePrettyLogger: true }))
