/**
 * The real service for CLI tests: `svc start` as a child process against a fresh database on the
 * run's PostgreSQL (API and worker in one process, bootstrapped in development), and the CLI as
 * a child process too: `node scripts/svc.mjs …` with its own credential directory.
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { createDatabase, dropDatabase } from "../../../../testing/database.js"
import { testRuntimeRoot } from "../../../../testing/gatewayRuntime.js"
import { freePort, repositoryRoot, svc, type SvcProcess } from "../../../../testing/process.js"

export const ADMIN_EMAIL = "admin@example.com"
export const ADMIN_PASSWORD = "cli-test dev admin password"

export interface Service {
  readonly baseUrl: string
  readonly dataDir: string
  readonly keyFile: string
  /** The bootstrap key (an Installation administrator), for set-up through the API. */
  readonly adminKey: string
  readonly process: SvcProcess
  readonly stop: () => Promise<void>
}

export const startService = async (): Promise<Service> => {
  const databaseUrl = await createDatabase()
  const port = await freePort()
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "svc-cli-data-"))
  const baseUrl = `http://127.0.0.1:${port}`
  const process_ = svc("start", {
    DATABASE_URL: databaseUrl,
    SVC_DATA_DIR: dataDir,
    SVC_PORT: String(port),
    SVC_BASE_URL: baseUrl,
    SVC_DEV_ADMIN_PASSWORD: ADMIN_PASSWORD,
    SVC_RUNTIME_DIR: testRuntimeRoot()
  })
  await process_.waitFor(/svc is ready/, 120_000)
  const keyFile = path.join(dataDir, "bootstrap-key.json")
  const adminKey = (JSON.parse(fs.readFileSync(keyFile, "utf8")) as { data: { key: string } }).data.key
  return {
    baseUrl,
    dataDir,
    keyFile,
    adminKey,
    process: process_,
    stop: async () => {
      await process_.stop("SIGINT")
      await dropDatabase(databaseUrl)
      fs.rmSync(dataDir, { recursive: true, force: true })
    }
  }
}

export interface CliResult {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/** `svc <args>` with only PATH, HOME and SVC_CONFIG_DIR; `stdin` piped when given. */
export const runCli = (configDir: string, args: ReadonlyArray<string>, stdin?: string): Promise<CliResult> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(repositoryRoot, "scripts/svc.mjs"), ...args], {
      cwd: repositoryRoot,
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", SVC_CONFIG_DIR: configDir },
      stdio: [stdin === undefined ? "ignore" : "pipe", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stdout!.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")))
    child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")))
    child.once("error", reject)
    child.once("close", (code) => resolve({ code, stdout, stderr }))
    if (stdin !== undefined) child.stdin!.end(stdin)
  })

/** The parsed `--json` document of a successful command. */
export const jsonOf = <A = Record<string, unknown>>(result: CliResult): A => {
  if (result.code !== 0) throw new Error(`exit ${result.code}: ${result.stderr}`)
  return JSON.parse(result.stdout) as A
}

/** An API call with a service key, for set-up the CLI has no command for. */
export const api = async (service: Service, key: string, method: string, url: string, body?: unknown) => {
  const response = await fetch(`${service.baseUrl}${url}`, {
    method,
    headers: { "x-api-key": key, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  return { status: response.status, body: (await response.json()) as { data: Record<string, unknown> } }
}

/** Polls `read` (1 s apart) until `done`, for at most `seconds`. */
export const eventually = async <A>(read: () => Promise<A>, done: (a: A) => boolean, seconds = 120): Promise<A> => {
  const deadline = Date.now() + seconds * 1000
  for (;;) {
    const value = await read()
    if (done(value)) return value
    if (Date.now() > deadline) throw new Error(`not reached in ${seconds} s: ${JSON.stringify(value).slice(0, 500)}`)
    await new Promise((resolve) => setTimeout(resolve, 1000))
  }
}
