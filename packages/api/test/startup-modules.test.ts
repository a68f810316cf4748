/**
 * The process commands on the `local` Compute Driver never load `@kubernetes/client-node`: it is
 * about 800 modules and most of a second of every start (docs/decisions/performance.md, session
 * 19), so only `select.ts` imports the kubernetes driver, and only when it is selected. Each
 * command runs with a module hook that refuses to resolve the client; a command that reached it
 * would exit with the hook's error instead of getting as far as its database.
 */
import { describe, expect, it } from "@effect/vitest"
import { spawn } from "node:child_process"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..")
const REFUSED = "kubernetes client loaded"
const hook = `export async function resolve(specifier, context, next) {
  if (specifier === "@kubernetes/client-node") throw new Error(${JSON.stringify(REFUSED)})
  return next(specifier, context)
}`
const register = `import { register } from "node:module"; register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(hook)}`)});`
const withHook = ["--import", `data:text/javascript,${encodeURIComponent(register)}`]

interface Outcome {
  readonly output: string
  readonly code: number | null
}

/** Runs `node <args>` until its first output line (then stops it) or, with `toExit`, its exit. */
const run = (args: ReadonlyArray<string>, { toExit = false } = {}): Promise<Outcome> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...withHook, ...args], {
      cwd: root,
      // Nothing listens on port 9: a command that loaded gets as far as retrying its database.
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

const RETRYING = JSON.stringify({ level: "WARN", message: "database not reachable yet; retrying" }).slice(1, -1)

describe("process start-up on the local Compute Driver", () => {
  // The first line each prints once its modules have loaded: a database retry, or (the
  // credential service, given no Installation configuration) its configuration error.
  it.each([
    ["api", RETRYING],
    ["worker", RETRYING],
    ["migrate", RETRYING],
    ["credential-service", "SVC_INSTALLATION_CONFIG: svc credential-service needs a code_host Backend with a registryPath"]
  ])("svc %s does not load the Kubernetes client", async (command, firstLine) => {
    const { output } = await run(["scripts/svc.mjs", command])
    expect(output).not.toContain(REFUSED)
    expect(output.split("\n")[0]).toContain(firstLine)
  }, 60_000)

  it("the hook does refuse it: the kubernetes driver's entry cannot load under it", async () => {
    const result = await run(["--input-type=module", "-e", `await import("@svc/core/drivers/compute/kubernetes")`], { toExit: true })
    expect(result.output).toContain(REFUSED)
    expect(result.code).toBe(1)
  }, 60_000)
})
