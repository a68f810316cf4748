/**
 * The real API with the console dispatch, on its own trusted origin (the auth base URL is the
 * address it listens on), so a browser page served there is same-origin and its mutations carry
 * the Origin the service trusts (SPEC 5.3). The Compute Driver, the console directory and the
 * Installation are the test's choice; the SqlClient and the Secret Driver stay available to seed
 * and to share with a worker.
 */
import { NodeHttpServer } from "@effect/platform-node"
import { ApiGroupsLive, AuthSettings, consoleDispatch, SvcApi } from "@svc/api"
import { defaultInstallationConfig, type InstallationConfig, InstallationConfiguration } from "@svc/core/config"
import type { ComputeDriver } from "@svc/core/drivers/compute"
import { freePort } from "@svc/core/embedded-postgres"
import { httpPipeline } from "@svc/core/http"
import { Effect, Layer } from "effect"
import { createServer } from "node:http"
import { migratedDatabaseLayer } from "../../../../testing/database.js"
import { testSecretDriver } from "../../../../testing/drivers.js"
import { TestServer } from "../../../../testing/server.js"

export const consoleServerLayer = <R>(
  compute: Layer.Layer<ComputeDriver, never, R>,
  consoleDir?: string,
  installation: InstallationConfig = defaultInstallationConfig
) =>
  Layer.unwrapEffect(
    Effect.map(Effect.promise(freePort), (port) => {
      const baseUrl = `http://127.0.0.1:${port}`
      const pipeline = Layer.unwrapEffect(Effect.map(consoleDispatch(consoleDir), (dispatch) =>
        httpPipeline(SvcApi, ApiGroupsLive, { development: true, maxBodyBytes: 448 * 1024 }, dispatch)))
      return pipeline.pipe(
        Layer.merge(Layer.succeed(TestServer, { baseUrl })),
        Layer.provide(NodeHttpServer.layer(createServer, { host: "127.0.0.1", port })),
        Layer.provide(compute),
        Layer.provideMerge(testSecretDriver),
        Layer.provide(Layer.succeed(AuthSettings, AuthSettings.from({ baseUrl, production: false }))),
        Layer.provide(Layer.succeed(InstallationConfiguration, installation)),
        Layer.provideMerge(migratedDatabaseLayer)
      )
    })
  )
