import { afterAll, describe, expect, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Migrations } from "@svc/core/db"
import { Effect } from "effect"
import { sampleRegistry, socketRequest, startCredentialService, writeCredentialServiceFiles } from "../../../testing/credentialService.js"
import { createDatabase, dropDatabase, pgClientLayer } from "../../../testing/database.js"
import { freePort, svc } from "../../../testing/process.js"
import { until } from "../../../testing/poll.js"
import { call, REQUEST_ID } from "../../../testing/server.js"

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "svc-processes-"))
fs.chmodSync(scratch, 0o711)
afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }))

const AUTH_SECRET = "s3cret-auth-value-that-must-never-be-logged-0123456789"
const ADMIN_PASSWORD = "dev-admin-password-never-logged"

const jsonLines = (output: string) =>
  output
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as { level: string; message: unknown; annotations: Record<string, unknown> })

describe("npm start (all-in-one development mode)", () => {
  it("starts an embedded PostgreSQL, migrates, serves /readyz, and stops cleanly on SIGINT", async () => {
    const dataDir = path.join(scratch, "start")
    const port = await freePort()
    const env = {
      SVC_DATA_DIR: dataDir,
      SVC_PORT: String(port),
      SVC_AUTH_SECRET: AUTH_SECRET,
      SVC_DEV_ADMIN_PASSWORD: ADMIN_PASSWORD
    }
    const first = svc("start", env)
    try {
      await first.waitFor(new RegExp(`svc is ready at http://127\\.0\\.0\\.1:${port}`), 90_000)
      const ready = await call(`http://127.0.0.1:${port}/readyz`)
      expect(ready.status).toBe(200)
      expect(ready.body).toEqual({
        data: { status: "ready", database: "ok", migrations: "current" },
        meta: { requestId: expect.stringMatching(REQUEST_ID) }
      })
      const missing = await call(`http://127.0.0.1:${port}/nope`)
      expect(missing.status).toBe(404)
    } finally {
      const exit = await first.stop("SIGINT")
      expect(exit.code).toBe(0)
    }
    const output = first.output()
    // Every line is structured JSON; the request id of a request is on its log line.
    const lines = output.split("\n").filter((line) => line.trim().length > 0)
    for (const line of lines) expect(() => JSON.parse(line), line).not.toThrow()
    const requests = jsonLines(output).filter((entry) => entry.message === "http request")
    expect(requests.length).toBeGreaterThanOrEqual(2)
    for (const entry of requests) expect(entry.annotations.requestId).toMatch(REQUEST_ID)
    expect(output).toContain("embedded PostgreSQL stopped")
    // Secrets from the configuration never reach the logs.
    expect(output).not.toContain(AUTH_SECRET)
    expect(output).not.toContain(ADMIN_PASSWORD)
    const embeddedPassword = fs.readFileSync(path.join(dataDir, "postgres", "pg-password"), "utf8").trim()
    expect(output).not.toContain(embeddedPassword)
    expect(fs.existsSync(path.join(dataDir, "postgres", "pg", "postmaster.pid"))).toBe(false)

    // A second start reuses the same cluster and data, with nothing new to migrate.
    const second = svc("start", env)
    try {
      await second.waitFor(/svc is ready/, 90_000)
      expect((await call(`http://127.0.0.1:${port}/readyz`)).status).toBe(200)
    } finally {
      expect((await second.stop("SIGINT")).code).toBe(0)
    }
    expect(second.output()).toMatch(/"message":"migrations applied","annotations":\{"count":0\}/)
  }, 240_000)

  it("a terminal's Ctrl-C (SIGINT to the whole process group) stops PostgreSQL last, not first", async () => {
    const port = await freePort()
    const env = { SVC_DATA_DIR: path.join(scratch, "ctrl-c"), SVC_PORT: String(port), SVC_AUTH_SECRET: AUTH_SECRET }
    const started = svc("start", env, { group: true })
    try {
      await started.waitFor(new RegExp(`svc is ready at http://127\\.0\\.0\\.1:${port}`), 90_000)
    } finally {
      expect((await started.stop("SIGINT")).code).toBe(0)
    }
    const entries = jsonLines(started.output())
    // PostgreSQL got no signal of its own: nothing lost its connection on the way out, and
    // nothing took its exit for a crash.
    expect(entries.filter((entry) => entry.level === "ERROR")).toEqual([])
    expect(started.output()).not.toContain("exited on its own")
    expect(started.output()).not.toContain("SqlError")
    expect(entries.at(-1)?.message).toBe("embedded PostgreSQL stopped")
  }, 240_000)

  it("a PostgreSQL left running by a killed svc start is stopped by the next start, which then serves", async () => {
    const dataDir = path.join(scratch, "orphan")
    const port = await freePort()
    const env = { SVC_DATA_DIR: dataDir, SVC_PORT: String(port), SVC_AUTH_SECRET: AUTH_SECRET }
    const first = svc("start", env, { group: true })
    await first.waitFor(/svc is ready/, 90_000)
    const pidFile = path.join(dataDir, "postgres", "pg", "postmaster.pid")
    const orphan = Number(fs.readFileSync(pidFile, "utf8").split("\n")[0])
    // SIGKILL to the whole group, as `kill -9 -<pgid>` would: svc has no chance to stop PostgreSQL.
    await first.stop("SIGKILL")
    expect(() => process.kill(orphan, 0)).not.toThrow()

    const second = svc("start", env)
    try {
      await second.waitFor(/svc is ready/, 90_000)
      expect((await call(`http://127.0.0.1:${port}/readyz`)).status).toBe(200)
    } finally {
      expect((await second.stop("SIGINT")).code, second.output()).toBe(0)
    }
    expect(second.output()).toContain(`stopping an orphaned PostgreSQL (pid ${orphan}) that a killed svc left running`)
    // Gone, or a zombie its new parent has not reaped yet.
    const stat = fs.existsSync(`/proc/${orphan}/stat`) ? fs.readFileSync(`/proc/${orphan}/stat`, "utf8") : ""
    expect(stat === "" || /\) Z /.test(stat), stat).toBe(true)
  }, 240_000)

  it("recovers from a crash that left a stale postmaster.pid", async () => {
    const dataDir = path.join(scratch, "crash")
    const port = await freePort()
    const env = { SVC_DATA_DIR: dataDir, SVC_PORT: String(port) }
    const first = svc("start", env)
    await first.waitFor(/svc is ready/, 90_000)
    const pidFile = path.join(dataDir, "postgres", "pg", "postmaster.pid")
    const postgresPid = Number(fs.readFileSync(pidFile, "utf8").split("\n")[0])
    // Kill both without any chance to clean up: the lock file stays behind.
    first.child.kill("SIGKILL")
    await first.exited
    process.kill(postgresPid, "SIGKILL")
    await new Promise((resolve) => setTimeout(resolve, 500))
    expect(fs.existsSync(pidFile)).toBe(true)

    const second = svc("start", env)
    try {
      await second.waitFor(/svc is ready/, 90_000)
      expect((await call(`http://127.0.0.1:${port}/readyz`)).status).toBe(200)
    } finally {
      const stopped = await second.stop("SIGINT")
      expect(stopped.code, second.output()).toBe(0)
    }
  }, 240_000)

  it("starts its embedded PostgreSQL again when it is killed, and serves again", async () => {
    const dataDir = path.join(scratch, "postgres-killed")
    const port = await freePort()
    const start = svc("start", { SVC_DATA_DIR: dataDir, SVC_PORT: String(port) })
    const pidFile = path.join(dataDir, "postgres", "pg", "postmaster.pid")
    const postmaster = () => Number(fs.readFileSync(pidFile, "utf8").split("\n")[0])
    try {
      await start.waitFor(/svc is ready/, 90_000)
      const killed = postmaster()
      // The OOM killer's way: no shutdown, backends orphaned.
      process.kill(killed, "SIGKILL")
      await start.waitFor(/"message":"the embedded PostgreSQL exited on its own; starting it again".*"signal":"SIGKILL"/, 30_000)
      await start.waitFor(/embedded PostgreSQL is up again/, 90_000)
      expect(postmaster()).not.toBe(killed)
      await Effect.runPromise(until(Effect.promise(() => call(`http://127.0.0.1:${port}/readyz`)), (ready) => ready.status === 200, 180))
    } finally {
      const stopped = await start.stop("SIGINT")
      expect(stopped.code, start.output()).toBe(0)
    }
    expect(start.output()).toContain("embedded PostgreSQL stopped")
    expect(fs.existsSync(pidFile)).toBe(false)
  }, 240_000)
})

describe("the production split", () => {
  it("svc migrate, svc api and svc worker run against DATABASE_URL and stop on SIGTERM", async () => {
    const url = await createDatabase()
    try {
      const port = await freePort()
      const env = { DATABASE_URL: url, SVC_PORT: String(port), SVC_DATA_DIR: path.join(scratch, "split") }
      const migrate = svc("migrate", env)
      expect((await migrate.exited).code).toBe(0)
      expect(migrate.output()).toContain('"message":"migrations applied"')
      const again = svc("migrate", env)
      expect((await again.exited).code).toBe(0)
      expect(again.output()).toContain('"message":"database schema is current"')

      const api = svc("api", env)
      const worker = svc("worker", env)
      try {
        await api.waitFor(/svc api listening/)
        await worker.waitFor(/work engine started/)
        expect((await call(`http://127.0.0.1:${port}/readyz`)).status).toBe(200)
      } finally {
        expect((await api.stop()).code).toBe(0)
        expect((await worker.stop()).code).toBe(0)
      }
      expect(worker.output()).toContain("work engine stopping")
    } finally {
      await dropDatabase(url)
    }
  }, 120_000)

  it("svc api reports 503 on /readyz while migrations are not applied", async () => {
    const url = await createDatabase()
    try {
      const port = await freePort()
      const api = svc("api", { DATABASE_URL: url, SVC_PORT: String(port), SVC_DATA_DIR: path.join(scratch, "unmigrated") })
      try {
        await api.waitFor(/svc api listening/)
        const ready = await call(`http://127.0.0.1:${port}/readyz`)
        expect(ready.status).toBe(503)
        expect(ready.body.error).toEqual({
          code: "DEPENDENCY_UNAVAILABLE",
          message: "The database migrations are not current."
        })
      } finally {
        await api.stop()
      }
    } finally {
      await dropDatabase(url)
    }
  }, 60_000)

  it("svc credential-service serves its control interface on a mode-0600 socket and removes it on exit", async () => {
    const files = writeCredentialServiceFiles(sampleRegistry())
    const url = await createDatabase()
    try {
      await Effect.runPromise(Effect.provide(Migrations.run, pgClientLayer(url)))
      const { process: service } = await startCredentialService(files, url)
      try {
        expect(fs.statSync(files.socketPath).mode & 0o777).toBe(0o600)
        const capabilities = await socketRequest(files.socketPath, "GET", "/v1/capabilities")
        expect([capabilities.status, capabilities.body]).toEqual([
          200,
          { data: { durableAdmissionVersion: 1 }, meta: { requestId: expect.stringMatching(REQUEST_ID) } }
        ])
      } finally {
        expect((await service.stop()).code).toBe(0)
      }
      expect(fs.existsSync(files.socketPath)).toBe(false)
    } finally {
      await dropDatabase(url)
      fs.rmSync(files.dir, { recursive: true, force: true })
    }
  }, 90_000)

  it("svc credential-service without a code_host Backend stops with exit 78 and says why", async () => {
    const service = svc("credential-service", { SVC_DATA_DIR: path.join(scratch, "credential-unconfigured"), DATABASE_URL: "postgres://u:p@127.0.0.1:1/db" })
    const { code } = await service.exited
    expect(code).toBe(78)
    expect(service.output()).toMatch(/code_host/)
  }, 60_000)
})

describe("configuration errors", () => {
  const cases: ReadonlyArray<readonly [string, Record<string, string>, RegExp]> = [
    ["api", { SVC_PORT: "not-a-port", DATABASE_URL: "postgres://u:p@127.0.0.1:1/db" }, /SVC_PORT/],
    ["api", {}, /DATABASE_URL: .*required by svc api/],
    ["worker", {}, /DATABASE_URL: .*required by svc worker/],
    ["migrate", {}, /DATABASE_URL: .*required by svc migrate/],
    ["start", { SVC_ENV: "staging" }, /SVC_ENV/],
    ["api", { SVC_ENV: "production", DATABASE_URL: "postgres://u:p@127.0.0.1:1/db" }, /SVC_AUTH_SECRET/],
    // The Secret Driver has no key: the worker stops instead of sealing with a random one.
    ["worker", { SVC_ENV: "production", DATABASE_URL: "postgres://u:p@127.0.0.1:1/db", SVC_AUTH_SECRET: "a".repeat(32) }, /SVC_SECRET_KEY/],
    // --- service accounts (issue 13): upstream overrides are for development only (DESIGN §11) ---
    ["api", {
      SVC_ENV: "production",
      DATABASE_URL: "postgres://u:p@127.0.0.1:1/db",
      SVC_AUTH_SECRET: "a".repeat(32),
      SVC_SECRET_KEY: Buffer.alloc(32, 7).toString("base64"),
      SVC_BASE_URL: "https://svc.example.com",
      SVC_DEV_UPSTREAMS: JSON.stringify({ "https://api.modelvendor.com": "http://127.0.0.1:9001" })
    }, /SVC_DEV_UPSTREAMS: .*only allowed when SVC_ENV=development/]
    // --- end service accounts ---
  ]
  for (const [command, env, pattern] of cases) {
    it(`svc ${command} with ${JSON.stringify(env)} exits 78 naming the variable`, async () => {
      const child = svc(command, { SVC_DATA_DIR: path.join(scratch, "config-errors"), ...env })
      const exit = await child.exited
      expect(exit.code).toBe(78)
      expect(child.output()).toMatch(pattern)
      expect(child.output()).not.toContain("u:p@")
    }, 30_000)
  }

  it("an unknown svc command exits 64 with the usage", async () => {
    const child = svc("nonsense", {})
    expect((await child.exited).code).toBe(64)
    expect(child.output()).toMatch(/unknown command "nonsense"[\s\S]*usage: svc <command>/)
  })
})
