/**
 * `node` child processes under a module resolve hook, for tests about what a command loads
 * (startup-modules.test.ts, svc-bundle.test.ts).
 */
import { spawn } from "node:child_process"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

export const repositoryRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../..")

/** `node` arguments that register `hook` (the source of an ES module exporting `resolve`). */
export const withResolveHook = (hook: string): ReadonlyArray<string> => {
  const register = `import { register } from "node:module"; register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(hook)}`)});`
  return ["--import", `data:text/javascript,${encodeURIComponent(register)}`]
}

export interface Outcome {
  readonly output: string
  readonly code: number | null
}

/** The first line a command prints once its modules have loaded and it looks for its database. */
export const RETRYING = JSON.stringify({ level: "WARN", message: "database not reachable yet; retrying" }).slice(1, -1)

/**
 * Runs `node <args>` in the repository until its first output line (then stops it) or, with
 * `toExit`, its exit. Nothing listens on port 9: a command that loaded gets as far as retrying
 * its database.
 */
export const runNode = (args: ReadonlyArray<string>, { toExit = false } = {}): Promise<Outcome> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, {
      cwd: repositoryRoot,
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", DATABASE_URL: "postgres://svc:svc@127.0.0.1:9/svc" },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let output = ""
    const collect = (chunk: Buffer) => {
      output += chunk.toString("utf8")
      if (!toExit && output.includes("\n")) child.kill("SIGKILL")
    }
    child.stdout.on("data", collect)
    child.stderr.on("data", collect)
    child.once("error", reject)
    child.once("close", (code) => resolve({ output, code }))
  })
