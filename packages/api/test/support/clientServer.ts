/**
 * The real API served on its own trusted origin, for tests that call it as a client would: the
 * auth base URL is the address it listens on (so a browser page served there, or a Node client
 * sending that `Origin`, is same-origin), and the database is bootstrapped in development the
 * way `npm start` does it: the development administrator with a known password and the
 * `default` Namespace.
 */
import { NodeHttpServer } from "@effect/platform-node"
import { ApiGroupsLive, AuthSettings, SvcApi } from "@svc/api"
import { defaultInstallationConfig, InstallationConfiguration } from "@svc/core/config"
import { freePort } from "@svc/core/embedded-postgres"
import { httpPipeline } from "@svc/core/http"
import { WorkOutboxLive } from "@svc/worker"
import { Effect, Layer, Option, Redacted } from "effect"
import * as fs from "node:fs"
import { createServer } from "node:http"
import * as os from "node:os"
import * as path from "node:path"
import { migratedDatabaseLayer } from "../../../../testing/database.js"
import { testSecretDriver, unavailableCompute } from "../../../../testing/drivers.js"
import { TestServer } from "../../../../testing/server.js"
import { BootstrapReposLive, runBootstrap } from "../../src/bootstrap/initializer.js"

/** The development administrator bootstrap creates (`SVC_BOOTSTRAP_ADMIN_EMAIL` default). */
export const DEV_ADMIN = { email: "admin@example.com", password: "client-test dev admin password" } as const

const bootstrapped = Layer.scopedDiscard(
  Effect.gen(function* () {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "svc-client-bootstrap-"))
    yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true })))
    yield* runBootstrap({
      env: "development",
      adminEmail: DEV_ADMIN.email,
      keyPath: path.join(dir, "bootstrap-key.json"),
      passwordPath: path.join(dir, "bootstrap-password.txt"),
      devAdminPassword: Option.some(Redacted.make(DEV_ADMIN.password))
    }).pipe(Effect.provide(Layer.merge(WorkOutboxLive, BootstrapReposLive)))
  })
)

/** The whole API on `http://127.0.0.1:<free port>`, which is also its trusted origin. */
export const clientServerLayer = Layer.unwrapEffect(
  Effect.map(Effect.promise(freePort), (port) => {
    const baseUrl = `http://127.0.0.1:${port}`
    return httpPipeline(SvcApi, ApiGroupsLive, { development: true, maxBodyBytes: 448 * 1024 }).pipe(
      Layer.merge(Layer.succeed(TestServer, { baseUrl })),
      Layer.provide(NodeHttpServer.layer(createServer, { host: "127.0.0.1", port })),
      Layer.provide(Layer.merge(testSecretDriver, unavailableCompute)),
      Layer.provide(Layer.succeed(AuthSettings, AuthSettings.from({ baseUrl, production: false }))),
      Layer.provide(Layer.succeed(InstallationConfiguration, defaultInstallationConfig)),
      // Provided layers are built first: the Installation exists before the server listens.
      Layer.provide(bootstrapped),
      Layer.provideMerge(migratedDatabaseLayer)
    )
  })
)
