/**
 * The gateway as an operating-system process: spawned detached in its own process group with its
 * output appended to the Agent's log file, recorded in `gateway.json` so a restarted worker can
 * find it again, recognised before any signal is sent, and stopped as a whole group.
 *
 * Recognition: the gateway renames its process (`/proc/<pid>/cmdline` reads "openclaw-gateway"),
 * so a live pid is taken for our gateway only when its environment (`/proc/<pid>/environ`)
 * names this Agent's state directory. A reused pid, a zombie or a foreign process never matches,
 * so a stale record can never make us signal somebody else's process group.
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs/promises"
import type { Launch } from "./confinement.js"
import { readIfExists, writePrivateFile, type AgentLayout } from "./layout.js"
import { groupAlive } from "./processGroup.js"

/** What `gateway.json` holds (owner-only: it carries the gateway token). */
export interface GatewayRecord {
  readonly pid: number
  readonly port: number
  readonly revisionId: string
  readonly token: string
  readonly startedAt: string
  /** When `/readyz` first answered 200, and when the start's checks (the model probe) passed. */
  readonly readyAt?: string | undefined
  readonly checkedAt?: string | undefined
  /** Set once the gateway was stopped on purpose. */
  readonly stoppedAt?: string | undefined
}

export interface GatewayExit {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
}

export interface SpawnedGateway {
  readonly pid: number
  readonly exited: Promise<GatewayExit>
}

export const readRecord = async (layout: AgentLayout): Promise<GatewayRecord | undefined> => {
  const text = await readIfExists(layout.processFile)
  if (text === undefined) return undefined
  try {
    const record = JSON.parse(text) as GatewayRecord
    return Number.isInteger(record.pid) && Number.isInteger(record.port) && typeof record.token === "string"
      ? record
      : undefined
  } catch {
    return undefined
  }
}

export const writeRecord = (layout: AgentLayout, record: GatewayRecord): Promise<void> =>
  writePrivateFile(layout.processFile, `${JSON.stringify(record)}\n`)

/**
 * The log file, opened by the service: never through a symbolic link, and only a regular file,
 * because the logs directory may belong to the gateway's user (which could otherwise point the
 * service at any file on the host).
 */
const openLog = async (file: string, flags: number): Promise<fs.FileHandle> => {
  const handle = await fs.open(file, flags | fs.constants.O_NOFOLLOW, 0o600)
  const stat = await handle.stat()
  if (!stat.isFile() || stat.nlink > 1) {
    await handle.close()
    throw new Error("the gateway log is not a plain file")
  }
  return handle
}

/** The `openclaw gateway run` command line for `port` (program first). */
export const gatewayArgv = (runtime: { readonly node: string; readonly entry: string }, port: number): ReadonlyArray<string> =>
  [runtime.node, runtime.entry, "gateway", "run", "--port", String(port), "--bind", "loopback"]

/** Starts the gateway as `launch` says with exactly `env`, detached, output to the log file. */
export const spawnGateway = async (input: {
  readonly launch: Launch
  readonly layout: AgentLayout
  readonly port: number
  readonly env: Record<string, string>
}): Promise<SpawnedGateway> => {
  const log = await openLog(input.layout.logFile, fs.constants.O_WRONLY | fs.constants.O_APPEND | fs.constants.O_CREAT)
  try {
    await log.write(`\n--- svc: starting gateway on 127.0.0.1:${input.port} at ${new Date().toISOString()}\n`)
    const child = spawn(
      input.launch.command,
      [...input.launch.args],
      { cwd: input.layout.workspace, env: input.env, detached: true, stdio: ["ignore", log.fd, log.fd] }
    )
    const exited = new Promise<GatewayExit>((resolve) => {
      child.once("exit", (code, signal) => resolve({ code, signal }))
      child.once("error", () => resolve({ code: null, signal: null }))
    })
    child.unref()
    if (child.pid === undefined) {
      await exited
      throw new Error("the gateway process could not be started")
    }
    return { pid: child.pid, exited }
  } finally {
    // The child holds its own copy of the descriptor.
    await log.close()
  }
}

/**
 * Runs a short command (launched like the gateway) with its output appended to the gateway's
 * log, and waits for it (killed after `timeoutMs`). Used to explain a rejected configuration.
 */
export const runToLog = async (input: {
  readonly launch: Launch
  readonly layout: AgentLayout
  readonly env: Record<string, string>
  readonly timeoutMs: number
}): Promise<void> => {
  const log = await openLog(input.layout.logFile, fs.constants.O_WRONLY | fs.constants.O_APPEND | fs.constants.O_CREAT)
  try {
    const child = spawn(input.launch.command, [...input.launch.args], {
      cwd: input.layout.workspace,
      env: input.env,
      stdio: ["ignore", log.fd, log.fd],
      timeout: input.timeoutMs
    })
    await new Promise<void>((resolve) => {
      child.once("exit", () => resolve())
      child.once("error", () => resolve())
    })
  } finally {
    await log.close()
  }
}

const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
}

/** Whether `pid` is a live gateway of this Agent (see the module comment). */
export const isOurGateway = async (pid: number, layout: AgentLayout): Promise<boolean> => {
  if (!Number.isInteger(pid) || pid <= 1 || !isAlive(pid)) return false
  try {
    const environ = await fs.readFile(`/proc/${pid}/environ`, "utf8")
    return environ.split("\0").includes(`OPENCLAW_STATE_DIR=${layout.state}`)
  } catch {
    return false
  }
}

const signalGroup = (pgid: number, signal: NodeJS.Signals): void => {
  try {
    process.kill(-pgid, signal)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ESRCH") throw error
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

const waitGroupGone = async (pgid: number, ms: number): Promise<boolean> => {
  const deadline = Date.now() + ms
  while (await groupAlive(pgid)) {
    if (Date.now() >= deadline) return false
    await sleep(100)
  }
  return true
}

/**
 * SIGTERM to the whole process group, SIGKILL after `graceMs`. The caller must have recognised
 * the group leader (`isOurGateway`) first. Resolves with how it ended.
 */
export const stopGroup = async (pgid: number, graceMs: number): Promise<"terminated" | "killed"> => {
  signalGroup(pgid, "SIGTERM")
  if (await waitGroupGone(pgid, graceMs)) return "terminated"
  signalGroup(pgid, "SIGKILL")
  if (await waitGroupGone(pgid, 5_000)) return "killed"
  throw new Error(`process group ${pgid} survived SIGKILL`)
}

/** The last part of the gateway's log, for our logs only (never a response or a work item). */
export const logTail = async (layout: AgentLayout, bytes = 4_000): Promise<string> => {
  try {
    const log = await openLog(layout.logFile, fs.constants.O_RDONLY)
    try {
      return (await log.readFile("utf8")).slice(-bytes)
    } finally {
      await log.close()
    }
  } catch {
    return ""
  }
}
