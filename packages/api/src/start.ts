/**
 * `npm start` (`svc start`): everything in one process for a laptop (DESIGN §3). An embedded
 * PostgreSQL unless DATABASE_URL is set, migrations, bootstrap (nothing when the Installation
 * exists), then the API and a worker side by side; with the `local` Compute Driver and no gateway
 * runtime yet, the runtime is installed in the background (deployments wait for it).
 * Ctrl-C stops the server, releases the worker's leases, closes the pool, then PostgreSQL.
 */
import { Runtime as PlatformRuntime } from "@effect/platform"
import { NodeRuntime } from "@effect/platform-node"
import { databaseLayer, Migrations } from "@svc/core/db"
import { loadOrExit } from "@svc/core/config"
import { processLayer, selectDrivers, startupConfig } from "@svc/core/runtime"
import { WorkOutboxLive } from "@svc/core/work"
import { RuntimeOnDemandLive, WorkerConfig, WorkerLive } from "@svc/worker"
import { KnownSecrets, metricsEndpointLayer } from "@svc/core/observability"
import { Cause, Effect, Exit, Layer, Option, Redacted } from "effect"
import { ApiServerLive } from "./apiServer.js"
import { BootstrapReposLive, runBootstrap } from "./bootstrap/initializer.js"
import { bootstrapInput } from "./bootstrap/settings.js"
import { CredentialServiceMisconfigured, hasCodeHost, supervisedCredentialService } from "./dev/credentialService.js"
import { embeddedDatabase } from "./dev/embeddedDatabase.js"
import { welcome } from "./dev/welcome.js"
import { serverOptions } from "./serverOptions.js"

const AllInOne = Layer.unwrapScoped(
  Effect.gen(function* () {
    const config = yield* startupConfig
    const workerOptions = yield* loadOrExit(WorkerConfig)
    // One of each Driver for both halves: what the API seals, the worker reveals.
    const drivers = yield* selectDrivers(config)
    const base = processLayer(config)
    const bootstrapSettings = yield* bootstrapInput(config)
    yield* welcome(config, bootstrapSettings).pipe(Effect.provide(base))
    const url = yield* Option.match(config.process.databaseUrl, {
      onSome: Effect.succeed,
      onNone: () => embeddedDatabase(config.process.dataDir).pipe(Effect.provide(base))
    })
    // The embedded server's generated password is a secret like any configured one.
    const masked = Layer.merge(base, KnownSecrets.layer([new URL(Redacted.value(url)).password]))
    const database = databaseLayer({ url, applicationName: "svc-start" })
    const migrate = Layer.effectDiscard(
      Migrations.run.pipe(
        Effect.tap((applied) =>
          Effect.logInfo("migrations applied").pipe(Effect.annotateLogs({ count: applied.length }))
        )
      )
    )
    // After migrations, before the API and the worker (SPEC 5.6); a failure stops the start.
    const bootstrap = Layer.effectDiscard(
      runBootstrap(bootstrapSettings).pipe(Effect.provide(Layer.merge(WorkOutboxLive, BootstrapReposLive)))
    )
    const listening = `http://${config.process.host}:${config.process.port}`
    const ready = Layer.effectDiscard(
      Effect.logInfo(`svc is ready at ${listening}`).pipe(
        Effect.annotateLogs({ url: listening, baseUrl: config.process.baseUrl, dataDir: config.process.dataDir })
      )
    )
    return ready.pipe(
      // One process, one registry: the one metrics endpoint shows the API's and the worker's.
      Layer.provide(
        Layer.mergeAll(
          ApiServerLive(serverOptions(config)),
          WorkerLive(workerOptions),
          RuntimeOnDemandLive,
          metricsEndpointLayer(config.process.telemetry),
          // With a code_host Backend: `svc credential-service` as a supervised child process.
          hasCodeHost(config) ? supervisedCredentialService(config, url) : Layer.empty
        )
      ),
      Layer.provide(drivers),
      Layer.provide(bootstrap),
      Layer.provide(migrate),
      Layer.provideMerge(database),
      Layer.provide(masked)
    )
  })
)

/** A credential service that refused its configuration stops the start with its exit code, 78. */
const teardown: PlatformRuntime.Teardown = (exit, onExit) =>
  Exit.isFailure(exit) && Option.exists(Cause.failureOption(exit.cause), (e) => e instanceof CredentialServiceMisconfigured)
    ? onExit(78)
    : PlatformRuntime.defaultTeardown(exit, onExit)

AllInOne.pipe(Layer.launch, (main) => NodeRuntime.runMain(main, { disablePrettyLogger: true, teardown }))
