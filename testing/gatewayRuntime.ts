/**
 * The gateway runtime for tests: installed once (by the real `installRuntime`) into a stable
 * directory that repeated runs reuse: `SVC_RUNTIME_DIR`, or `<repo>/.svc-data/runtime`.
 */
import { installRuntime } from "@svc/core/drivers/compute"
import { Effect } from "effect"
import * as path from "node:path"

export const testRuntimeRoot = (): string =>
  process.env.SVC_RUNTIME_DIR ?? path.resolve(import.meta.dirname, "..", ".svc-data", "runtime")

/** Installs the runtime unless present (about a minute and 840 MB the first time). */
export const ensureTestRuntime = (): Promise<string> =>
  Effect.runPromise(installRuntime(testRuntimeRoot()).pipe(Effect.map((outcome) => outcome.paths.directory)))

/** Whether any process of the group led by `pgid` still runs (zombies do not count): the driver's own check. */
export { groupAlive } from "@svc/core/drivers/compute"
