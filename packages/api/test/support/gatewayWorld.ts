/**
 * A worker beside an API under test, on the `local` Compute Driver with real gateways: the two
 * share the process configuration (data dir, installed runtime) and the Secret key, as
 * `npm start` does.
 */
import { defaultInstallationConfig, InstallationConfiguration, type LoadedProcessConfig, ProcessConfiguration } from "@svc/core/config"
import * as Compute from "@svc/core/drivers/compute"
import { builtinSecretDriverLayer } from "@svc/core/drivers/secret"
import { WorkerLive } from "@svc/worker"
import { Duration, Layer, Redacted } from "effect"
import { afterAll, beforeAll } from "@effect/vitest"
import { randomBytes } from "node:crypto"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { type FakeModelServer, startFakeModelServer } from "../../../../testing/fakeModelServer.js"
import { ensureTestRuntime, testRuntimeRoot } from "../../../../testing/gatewayRuntime.js"
import { LogCapture } from "../../../../testing/server.js"
import { apiTestLayerWith } from "./iamServer.js"

/** `api` is built from the Compute Driver the configuration selects (`Compute.layerFromConfiguration`). */
export const withWorker = <A, E, R>(api: Layer.Layer<A, E, R>, dataDir: string) =>
  WorkerLive({ pollInterval: Duration.millis(200) }).pipe(
    Layer.provide(Compute.layerFromConfiguration),
    Layer.provideMerge(api),
    Layer.provideMerge(Layer.succeed(InstallationConfiguration, defaultInstallationConfig)),
    Layer.provideMerge(Layer.succeed(ProcessConfiguration, { dataDir, runtimeDir: testRuntimeRoot() } as unknown as LoadedProcessConfig)),
    Layer.provideMerge(builtinSecretDriverLayer({ current: Redacted.make(new Uint8Array(randomBytes(32))) }))
  )

/** The test API (`apiTestLayerWith`) and a worker, with logs captured. */
export const gatewayWorldLayer = (dataDir: string) =>
  withWorker(apiTestLayerWith(Compute.layerFromConfiguration), dataDir).pipe(Layer.provideMerge(LogCapture.layer))

/**
 * What a test file with real gateways needs around it: a scratch data dir, the installed
 * runtime and a fake model server that accepts `apiKey`; removed after the file. Call it at the
 * top level of the file; `fake()` is there once the file's tests run.
 */
export const gatewayFixture = async (prefix: string, apiKey: string) => {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), prefix))
  let fake: FakeModelServer | undefined
  beforeAll(async () => {
    await ensureTestRuntime()
    fake = await startFakeModelServer({ apiKey })
  }, 20 * 60_000)
  afterAll(async () => {
    await fake?.close()
    await fs.rm(dataDir, { recursive: true, force: true })
  }, 60_000)
  return {
    dataDir,
    fake: (): FakeModelServer => {
      if (fake === undefined) throw new Error("the fake model server starts before the file's tests")
      return fake
    }
  }
}
