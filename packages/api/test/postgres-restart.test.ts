/**
 * PostgreSQL restarting under `svc api` and `svc worker` (an upgrade, a failover, a crash) must
 * not take them down or leave them stuck: they report the database unavailable while it is gone
 * and serve again once it is back, on new connections (named statements prepared again), with
 * the worker's LISTEN connection made again. Both run as real processes against a PostgreSQL of
 * this test's own, which it stops and starts on the same port. A database that stops answering
 * with its connections open (frozen behind a loopback proxy) must not hold requests either.
 */
import { describe, expect, it } from "@effect/vitest"
import { startEmbeddedPostgres } from "@svc/core/embedded-postgres"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { createDatabase, dropDatabase } from "../../../testing/database.js"
import { startPgProxy } from "../../../testing/pgProxy.js"
import { until } from "../../../testing/poll.js"
import { freePort, svc } from "../../../testing/process.js"
import { call } from "../../../testing/server.js"
import { outputDir, productionEnv, readKeyFile, run } from "./support/bootstrap.js"

/** `testing/poll.ts`'s `until` for this promise-based test: polls `read` until `done`, 60 s at most. */
const poll = <A>(read: () => Promise<A>, done: (a: A) => boolean): Promise<A> =>
  Effect.runPromise(until(Effect.promise(read), done, 60))

/** A migrated, bootstrapped database and the environment of processes serving it on a free port. */
const bootstrapped = async (url: string, name: string) => {
  const port = await freePort()
  const env = { ...productionEnv(url, outputDir(name)), SVC_PORT: String(port) }
  expect((await run("migrate", env)).exit.code).toBe(0)
  const bootstrap = await run("bootstrap", env)
  expect(bootstrap.exit.code, bootstrap.output).toBe(0)
  return { env, base: `http://127.0.0.1:${port}`, key: readKeyFile(env.SVC_BOOTSTRAP_KEY_PATH).data.key }
}

describe("PostgreSQL restarts under the processes", () => {
  it("svc api and svc worker report it unavailable, then serve again: a key authenticates, a Namespace created after it is provisioned", async () => {
    const pgDir = fs.mkdtempSync(path.join(os.tmpdir(), "svc-pg-restart-"))
    const pgPort = await freePort()
    let postgres = await startEmbeddedPostgres({ dir: pgDir, port: pgPort })
    try {
      const { env, base, key } = await bootstrapped(await postgres.ensureDatabase("svc_restart"), "pg-restart")
      const headers = { "x-api-key": key, "content-type": "application/json" }

      const api = svc("api", env)
      const worker = svc("worker", env)
      try {
        await api.waitFor(/svc api listening/)
        await worker.waitFor(/work engine started/)
        expect((await call(`${base}/installation`, { headers })).status).toBe(200)

        await postgres.stop()
        const down = await poll(() => call(`${base}/readyz`), (answer) => answer.status === 503)
        expect(down.body.error.code).toBe("DEPENDENCY_UNAVAILABLE")
        const refused = await call(`${base}/installation`, { headers })
        expect(refused.status).toBe(503)
        expect(refused.body.error.code).toBe("DEPENDENCY_UNAVAILABLE")

        postgres = await startEmbeddedPostgres({ dir: pgDir, port: pgPort })
        await poll(() => call(`${base}/readyz`), (answer) => answer.status === 200)
        const installation = await call(`${base}/installation`, { headers })
        expect(installation.status).toBe(200)

        const created = await call(`${base}/namespaces`, { method: "POST", headers, body: JSON.stringify({ name: "after-restart" }) })
        expect(created.status, JSON.stringify(created.body)).toBe(201)
        expect(created.body.data.status).toBe("provisioning")
        const ready = await poll(
          () => call(`${base}/namespaces/${created.body.data.id}`, { headers }),
          (answer) => answer.body.data?.status !== "provisioning"
        )
        expect(ready.body.data.status).toBe("ready")
      } finally {
        const apiExit = await api.stop()
        const workerExit = await worker.stop()
        expect(apiExit.code, api.output()).toBe(0)
        expect(workerExit.code, worker.output()).toBe(0)
      }
      for (const output of [api.output(), worker.output()]) expect(output).not.toContain("Unhandled")
    } finally {
      await postgres.stop()
      fs.rmSync(pgDir, { recursive: true, force: true })
    }
  }, 180_000)

  it("svc api refuses an authenticated request with 503 when the database stops answering, and serves again when it answers", async () => {
    const url = await createDatabase()
    const proxy = await startPgProxy(url)
    try {
      const { env, base, key } = await bootstrapped(url, "pg-frozen")
      const headers = { "x-api-key": key }

      const api = svc("api", { ...env, DATABASE_URL: proxy.via(url) })
      try {
        await api.waitFor(/svc api listening/)
        expect((await call(`${base}/installation`, { headers })).status).toBe(200)

        proxy.freeze()
        // Without a deadline the request would wait for the database, past this client's patience.
        const refused = await call(`${base}/installation`, { headers, signal: AbortSignal.timeout(45_000) })
        expect(refused.status).toBe(503)
        expect(refused.body.error).toEqual({ code: "DEPENDENCY_UNAVAILABLE", message: "Authentication is unavailable; retry later." })

        proxy.thaw()
        const served = await poll(() => call(`${base}/installation`, { headers }), (answer) => answer.status === 200)
        expect(served.body.data.capabilities).toBeDefined()
      } finally {
        proxy.thaw()
        const exit = await api.stop()
        expect(exit.code, api.output()).toBe(0)
      }
      expect(api.output()).not.toContain("Unhandled")
    } finally {
      await proxy.close()
      await dropDatabase(url)
    }
  }, 180_000)
})
