/**
 * Fetching a catalog plugin onto this host (DESIGN §15): its tarball from the registry, checked
 * against the pinned integrity before anything is unpacked, unpacked once per host into
 * `<cacheRoot>/<digest>/package` and reused by every later deployment. Transient failures (no
 * connection, a timeout, 429 or 5xx) are retried a few times; a wrong digest, a 4xx or a package
 * that is not the pinned one is not. A failed install leaves nothing in the cache.
 */
import { execFile } from "node:child_process"
import { createHash, randomBytes } from "node:crypto"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import { promisify } from "node:util"
import { type CatalogEntry, DEFAULT_REGISTRY, tarballPath } from "./catalog.js"

const run = promisify(execFile)

export class PluginInstallError extends Error {
  constructor(readonly reason: string, readonly transient: boolean) {
    super(reason)
  }
}

export interface InstallOptions {
  readonly registry?: string | undefined
  readonly cacheRoot: string
  /** Per request (default 30 s). */
  readonly timeoutMs?: number
  /** Attempts for transient failures (default 3). */
  readonly attempts?: number
}

const COMPLETE = ".complete"

/** The integrity's digest as a file-name-safe hex string. */
const cacheKey = (integrity: string): string => Buffer.from(integrity.replace(/^sha512-/, ""), "base64").toString("hex")

const exists = (file: string) => fs.access(file).then(() => true, () => false)

const download = async (url: string, timeoutMs: number): Promise<Buffer> => {
  let response: Response
  try {
    response = await fetch(url, { redirect: "error", signal: AbortSignal.timeout(timeoutMs) })
  } catch (cause) {
    throw new PluginInstallError(`the registry could not be reached (${String(cause)})`, true)
  }
  if (!response.ok) {
    throw new PluginInstallError(`the registry answered ${response.status}`, response.status === 429 || response.status >= 500)
  }
  return Buffer.from(await response.arrayBuffer())
}

const downloadWithRetries = async (url: string, timeoutMs: number, attempts: number): Promise<Buffer> => {
  for (let attempt = 1; ; attempt++) {
    try {
      return await download(url, timeoutMs)
    } catch (error) {
      if (!(error instanceof PluginInstallError) || !error.transient || attempt >= attempts) throw error
      await new Promise((resolve) => setTimeout(resolve, 250 * 2 ** attempt))
    }
  }
}

/**
 * The directory of the entry's unpacked package on this host, fetching and checking it first
 * when the cache does not hold it yet. Rejects with a `PluginInstallError`.
 */
export const ensureInstalled = async (entry: CatalogEntry, options: InstallOptions): Promise<string> => {
  const directory = path.join(options.cacheRoot, cacheKey(entry.integrity))
  const packageDir = path.join(directory, "package")
  if (await exists(path.join(directory, COMPLETE))) return packageDir
  const bytes = await downloadWithRetries(
    `${(options.registry ?? DEFAULT_REGISTRY).replace(/\/+$/, "")}${tarballPath(entry)}`,
    options.timeoutMs ?? 30_000,
    options.attempts ?? 3
  )
  const digest = `sha512-${createHash("sha512").update(bytes).digest("base64")}`
  if (digest !== entry.integrity) throw new PluginInstallError("the tarball does not match the pinned integrity", false)
  await fs.mkdir(options.cacheRoot, { recursive: true, mode: 0o755 })
  const staging = path.join(options.cacheRoot, `.staging-${randomBytes(8).toString("hex")}`)
  try {
    await fs.mkdir(staging, { mode: 0o755 })
    await fs.writeFile(path.join(staging, "package.tgz"), bytes)
    await run("tar", ["-xzf", "package.tgz", "--no-same-owner", "--no-same-permissions", "--", "package"], { cwd: staging })
    await fs.rm(path.join(staging, "package.tgz"))
    const manifest = JSON.parse(await fs.readFile(path.join(staging, "package", "package.json"), "utf8")) as { name?: unknown; version?: unknown }
    if (manifest.name !== entry.package || manifest.version !== entry.version) {
      throw new PluginInstallError("the tarball holds another package", false)
    }
    await fs.writeFile(path.join(staging, COMPLETE), `${entry.package}@${entry.version}\n`)
    await fs.rename(staging, directory).catch(async (error: NodeJS.ErrnoException) => {
      // Another worker put the same verified bytes in place first.
      if (!(await exists(path.join(directory, COMPLETE)))) throw error
    })
    return packageDir
  } catch (error) {
    throw error instanceof PluginInstallError ? error : new PluginInstallError(`the package could not be unpacked (${String(error)})`, false)
  } finally {
    await fs.rm(staging, { recursive: true, force: true })
  }
}
