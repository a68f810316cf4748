/**
 * `svc runtime install`: installs the local Compute Driver's pinned gateway runtime (Node.js 24
 * and `openclaw`) under `SVC_RUNTIME_DIR` (default `<SVC_DATA_DIR>/runtime`). Idempotent: an
 * installed runtime is left alone. Exit 1 when npm fails (its output is logged).
 */
import { NodeRuntime } from "@effect/platform-node"
import { loadOrExit, ProcessConfig } from "@svc/core/config"
import { installRuntime } from "@svc/core/drivers/compute"
import { Effect } from "effect"

const program = Effect.gen(function* () {
  const config = yield* loadOrExit(ProcessConfig)
  yield* installRuntime(config.runtimeDir)
}).pipe(
  Effect.catchTag("RuntimeInstallError", (error) =>
    Effect.logError("gateway runtime: install failed", { cause: error.message }).pipe(
      Effect.zipRight(Effect.sync(() => {
        process.exitCode = 1
      }))
    ))
)

NodeRuntime.runMain(program, { disablePrettyLogger: true })
