/**
 * Real child processes for tests: `node scripts/svc.mjs <command>` with a chosen environment,
 * its output collected line by line.
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as os from "node:os"
import * as path from "node:path"
import { testRuntimeRoot } from "./gatewayRuntime.js"

export { freePort } from "@svc/core/embedded-postgres"

export const repositoryRoot = path.resolve(import.meta.dirname, "..")

export interface SvcProcess {
  readonly child: ChildProcess
  readonly output: () => string
  readonly waitFor: (pattern: RegExp, timeoutMs?: number) => Promise<string>
  readonly exited: Promise<{ readonly code: number | null; readonly signal: NodeJS.Signals | null }>
  readonly stop: (signal?: NodeJS.Signals) => Promise<{ readonly code: number | null; readonly signal: NodeJS.Signals | null }>
}

/**
 * The environment of a test process: only what is given, plus PATH, HOME, the run's TMPDIR
 * (removed after the run: testing/globalSetup.ts) and the run's installed gateway runtime, so no
 * `svc start` installs another copy into its data directory in the background.
 */
export const svc = (command: string, env: Record<string, string>, options: ProcessOptions = {}): SvcProcess =>
  nodeProcess([path.join(repositoryRoot, "scripts/svc.mjs"), command], env, options)

export interface ProcessOptions {
  /**
   * Run as the leader of a process group of its own, like a terminal's foreground job, and have
   * `stop` signal the whole group, as a terminal's Ctrl-C does.
   */
  readonly group?: boolean
}

/** A TypeScript entry of testing/ as its own process (vite-node), with the same environment rules. */
export const testEntry = (file: string, env: Record<string, string>): SvcProcess =>
  nodeProcess([path.join(repositoryRoot, "node_modules/vite-node/vite-node.mjs"), path.join(repositoryRoot, file)], env)

const nodeProcess = (args: ReadonlyArray<string>, env: Record<string, string>, options: ProcessOptions = {}): SvcProcess => {
  const group = options.group === true
  const child = spawn(process.execPath, args, {
    cwd: repositoryRoot,
    detached: group,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", TMPDIR: os.tmpdir(), SVC_RUNTIME_DIR: testRuntimeRoot(), ...env },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let output = ""
  const waiters = new Set<() => void>()
  const collect = (chunk: Buffer) => {
    output += chunk.toString("utf8")
    for (const wake of waiters) wake()
  }
  child.stdout!.on("data", collect)
  child.stderr!.on("data", collect)
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal }))
  )
  const waitFor = (pattern: RegExp, timeoutMs = 60_000) =>
    new Promise<string>((resolve, reject) => {
      const check = () => {
        const match = pattern.exec(output)
        if (match) {
          waiters.delete(check)
          clearTimeout(timer)
          resolve(match[0])
        }
      }
      const timer = setTimeout(() => {
        waiters.delete(check)
        reject(new Error(`timed out waiting for ${pattern} in:\n${output}`))
      }, timeoutMs)
      waiters.add(check)
      void exited.then(() => {
        if (waiters.has(check)) {
          check()
          if (waiters.has(check)) {
            waiters.delete(check)
            clearTimeout(timer)
            reject(new Error(`process exited before ${pattern}:\n${output}`))
          }
        }
      })
      check()
    })
  const stop = async (signal: NodeJS.Signals = "SIGTERM") => {
    if (child.exitCode === null && child.signalCode === null) {
      if (group) process.kill(-child.pid!, signal)
      else child.kill(signal)
    }
    return exited
  }
  return { child, output: () => output, waitFor, exited, stop }
}
