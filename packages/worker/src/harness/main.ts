/**
 * `svc harness`: the model credential proxy of dedicated execution (`proxy.ts`), configured only
 * by its container's environment; an environment it cannot run with stops it with exit 78,
 * naming the variable (never a value). SIGTERM closes the listener.
 */
import { NodeRuntime } from "@effect/platform-node"
import { loadOrExit } from "@svc/core/config"
import { Effect, Layer, Runtime } from "effect"
import { harnessConfig, listenHarness } from "./proxy.js"

const HarnessProcess = Layer.scopedDiscard(
  Effect.gen(function* () {
    const config = yield* loadOrExit(harnessConfig)
    const runtime = yield* Effect.runtime<never>()
    const log = (line: Record<string, unknown>) => {
      const { level, message, ...annotations } = line
      const logged = level === "warn" ? Effect.logWarning(String(message)) : Effect.logInfo(String(message))
      Runtime.runSync(runtime)(logged.pipe(Effect.annotateLogs(annotations)))
    }
    yield* listenHarness({ ...config, log }).pipe(Effect.orDie)
    yield* Effect.logInfo("harness: listening").pipe(
      Effect.annotateLogs({ host: config.host, port: config.port, providers: Object.keys(config.upstreams).join(",") })
    )
  })
)

HarnessProcess.pipe(Layer.launch, (main) => NodeRuntime.runMain(main, { disablePrettyLogger: true }))
