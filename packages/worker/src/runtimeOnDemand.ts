/**
 * `npm start` installs the local gateway runtime on first need (DESIGN §8): with the `local`
 * Compute Driver and no runtime under `SVC_RUNTIME_DIR`, `installRuntime` runs in the
 * background, logging its progress, while the service serves. A deployment admitted meanwhile
 * stays pending: its attempts fail transiently with `RUNTIME_NOT_INSTALLED` and are retried.
 * Once installed, deployments waiting for the runtime are made due at once (and workers woken),
 * so they do not sit out their backoff. A failed install is logged with the way to retry it
 * (`svc runtime install`); the service keeps running.
 *
 * Only the all-in-one start does this: in the production split the runtime is installed by the
 * operator (`svc runtime install`), like any other dependency of the host.
 */
import { SqlClient } from "@effect/sql"
import { InstallationConfiguration, ProcessConfiguration } from "@svc/core/config"
import { installRuntime, RUNTIME_NOT_INSTALLED, runtimePaths } from "@svc/core/drivers/compute"
import { AGENT_DEPLOY } from "@svc/core/tenancy"
import { Duration, Effect, Layer } from "effect"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import { WORK_CHANNEL } from "@svc/core/work"

const installed = (runtimeDir: string) =>
  Effect.promise(() => fs.access(path.join(runtimePaths(runtimeDir).directory, "installed.json")).then(() => true, () => false))

/** Makes deployments that waited for the runtime due now, and wakes the workers. */
const retryWaitingDeployments = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql<{ id: string }>`
    UPDATE work_items SET next_attempt_at = now(), updated_at = now()
    WHERE kind = ${AGENT_DEPLOY} AND state = 'queued' AND last_attempt_code = ${RUNTIME_NOT_INSTALLED}
    RETURNING id
  `
  if (rows.length > 0) yield* sql`SELECT pg_notify(${WORK_CHANNEL}, ${AGENT_DEPLOY})`
  return rows.length
})

const installInBackground = (runtimeDir: string) =>
  Effect.gen(function* () {
    const started = Date.now()
    yield* Effect.logInfo("gateway runtime: missing; installing it in the background (deployments wait meanwhile)", { runtimeDir })
    const progress = Effect.suspend(() =>
      Effect.logInfo("gateway runtime: still installing", { seconds: Math.round((Date.now() - started) / 1000) })
    ).pipe(Effect.delay(Duration.seconds(15)), Effect.forever)
    // The progress ticker never ends on its own: the install's end (success or failure) wins.
    yield* Effect.raceFirst(installRuntime(runtimeDir), progress)
    const retried = yield* retryWaitingDeployments
    yield* Effect.logInfo("gateway runtime: ready", { seconds: Math.round((Date.now() - started) / 1000), deploymentsRetried: retried })
  }).pipe(
    Effect.catchAllCause((cause) =>
      Effect.logError("gateway runtime: install failed; deployments stay pending until `svc runtime install` succeeds", cause)
    )
  )

/** The background install of the all-in-one start (nothing when the driver is not `local` or the runtime is there). */
export const RuntimeOnDemandLive = Layer.scopedDiscard(
  Effect.gen(function* () {
    const installation = yield* InstallationConfiguration
    const process = yield* ProcessConfiguration
    if (installation.drivers.compute.id !== "local") return
    if (yield* installed(process.runtimeDir)) return
    yield* Effect.forkScoped(installInBackground(process.runtimeDir).pipe(Effect.annotateLogs({ fiber: "runtime.install" })))
  })
)
