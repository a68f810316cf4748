/** The bootstrap initializer (SPEC 5.6) in development: `svc bootstrap` and `npm start` as real child processes. */
import { describe, expect, it } from "@effect/vitest"
import { verifyPassword } from "@svc/api"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { createDatabase, dropDatabase } from "../../../testing/database.js"
import { freePort, svc, type SvcProcess } from "../../../testing/process.js"
import { call } from "../../../testing/server.js"
import { AUTH_SECRET, DEV_PASSWORD, query, outputDir, run, migrated, readKeyFile, issueKey } from "./support/bootstrap.js"

describe("bootstrap in development", () => {
  it.live("svc bootstrap uses the configured administrator password and writes no password file", () =>
    Effect.promise(async () => {
      const url = await migrated()
      const dataDir = path.join(outputDir("development"), "data")
      const env = { DATABASE_URL: url, SVC_DATA_DIR: dataDir, SVC_DEV_ADMIN_PASSWORD: DEV_PASSWORD, SVC_AUTH_SECRET: AUTH_SECRET }
      const result = await run("bootstrap", env)
      expect(result.exit.code, result.output).toBe(0)
      const keyPath = path.join(dataDir, "bootstrap-key.json")
      expect(result.output).toContain(`bootstrap key written to ${keyPath}`)
      expect(fs.statSync(keyPath).mode & 0o777).toBe(0o600)
      expect(fs.existsSync(path.join(dataDir, "bootstrap-password.txt"))).toBe(false)
      const [account] = await query(url, `
        SELECT a.email, m.password_hash FROM accounts a JOIN account_methods m ON m.account_id = a.id
      `)
      expect(account!.email).toBe("admin@example.com")
      expect(await Effect.runPromise(verifyPassword(account!.password_hash, DEV_PASSWORD))).toBe(true)
      expect(result.output).not.toContain(DEV_PASSWORD)
      expect(result.output).not.toContain(readKeyFile(keyPath).data.key)
      await dropDatabase(url)
    }), 60_000)

  it.live("npm start bootstraps after migrating, logs the key file, and the key works; a restart creates nothing", () =>
    Effect.promise(async () => {
      const url = await createDatabase()
      const dataDir = path.join(outputDir("start"), "data")
      const port = await freePort()
      const env = { DATABASE_URL: url, SVC_DATA_DIR: dataDir, SVC_PORT: String(port), SVC_AUTH_SECRET: AUTH_SECRET }
      const keyPath = path.join(dataDir, "bootstrap-key.json")
      const baseUrl = `http://127.0.0.1:${port}`
      let first: SvcProcess | undefined
      let key: string
      try {
        first = svc("start", env)
        await first.waitFor(/svc is ready/, 90_000)
        expect(first.output()).toContain(`bootstrap key written to ${keyPath}`)
        // Bootstrap ran after the migrations and before the API listened.
        const out = first.output()
        expect(out.indexOf("migrations applied")).toBeLessThan(out.indexOf("bootstrap key written"))
        expect(out.indexOf("bootstrap key written")).toBeLessThan(out.indexOf("svc api listening"))
        const output = readKeyFile(keyPath)
        key = output.data.key
        const issued = await issueKey(baseUrl, key, { servicePrincipalId: output.data.servicePrincipalId, name: "laptop" })
        expect(issued.status, issued.text).toBe(201)
        const installation = await call(`${baseUrl}/installation`, { headers: { "x-api-key": key } })
        expect(installation.status, installation.text).toBe(200)
        expect((await call(`${baseUrl}/installation`)).status).toBe(401)
      } finally {
        expect((await first?.stop("SIGINT"))?.code).toBe(0)
      }
      expect(first.output()).not.toContain(key)
      const second = svc("start", env)
      try {
        await second.waitFor(/svc is ready/, 90_000)
        expect(second.output()).toContain("installation already bootstrapped")
        expect(second.output()).not.toContain("bootstrap key written")
      } finally {
        expect((await second.stop("SIGINT")).code).toBe(0)
      }
      expect((await query(url, `SELECT count(*)::int AS n FROM installation`))[0]!.n).toBe(1)
      await dropDatabase(url)
    }), 240_000)
})
