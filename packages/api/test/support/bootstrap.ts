/** The bootstrap suites' scratch directory, process environments and database snapshots. */
import { afterAll, expect } from "@effect/vitest"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import pg from "pg"
import { createDatabase } from "../../../../testing/database.js"
import { freePort, svc } from "../../../../testing/process.js"
import { call } from "../../../../testing/server.js"

export const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "svc-bootstrap-"))
afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }))

export const AUTH_SECRET = "bootstrap-test-auth-secret-0123456789abcdef"
export const SECRET_KEY = crypto.randomBytes(32).toString("base64")
export const DEV_PASSWORD = "dev-admin-password-for-bootstrap"
export const EMAIL = "Root@Example.com"

export const query = async <R extends Record<string, any> = Record<string, any>>(url: string, text: string, params: Array<unknown> = []) => {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return (await client.query<R>(text, params)).rows
  } finally {
    await client.end()
  }
}

/** A fresh, owner-only directory for one test's outputs. */
export const outputDir = (name: string) => {
  const dir = path.join(scratch, name)
  fs.mkdirSync(dir, { mode: 0o700 })
  fs.chmodSync(dir, 0o700)
  return dir
}

export const productionEnv = (url: string, dir: string, extra: Record<string, string> = {}) => ({
  SVC_ENV: "production",
  DATABASE_URL: url,
  SVC_AUTH_SECRET: AUTH_SECRET,
  SVC_SECRET_KEY: SECRET_KEY,
  SVC_DATA_DIR: path.join(dir, "data"),
  SVC_BOOTSTRAP_KEY_PATH: path.join(dir, "bootstrap-key.json"),
  SVC_BOOTSTRAP_PASSWORD_PATH: path.join(dir, "bootstrap-password.txt"),
  SVC_BOOTSTRAP_ADMIN_EMAIL: EMAIL,
  ...extra
})

export const run = async (command: string, env: Record<string, string>) => {
  const child = svc(command, env)
  const exit = await child.exited
  return { exit, output: child.output() }
}

export const migrated = async () => {
  const url = await createDatabase()
  const migrate = await run("migrate", { DATABASE_URL: url, SVC_DATA_DIR: path.join(scratch, "migrate-data") })
  expect(migrate.exit.code, migrate.output).toBe(0)
  return url
}

/** What bootstrap may have created: everything SPEC 5.6 lists, counted. */
export const snapshot = (url: string) =>
  query(url, `
    SELECT
      (SELECT count(*)::int FROM installation) AS installations,
      (SELECT count(*)::int FROM principals) AS principals,
      (SELECT count(*)::int FROM accounts) AS accounts,
      (SELECT count(*)::int FROM access_bindings) AS bindings,
      (SELECT count(*)::int FROM namespaces) AS namespaces,
      (SELECT count(*)::int FROM service_keys) AS keys,
      (SELECT count(*)::int FROM work_items) AS work,
      (SELECT count(*)::int FROM audit_events WHERE kind = 'installation.bootstrapped') AS audits
  `).then((rows) => rows[0]!)

export const nothing = { installations: 0, principals: 0, accounts: 0, bindings: 0, namespaces: 0, keys: 0, work: 0, audits: 0 }

export const failureAudits = (url: string) =>
  query<{ outcome: string; details: Record<string, unknown> }>(
    url,
    `SELECT outcome, details FROM audit_events WHERE kind = 'installation.bootstrap-failed' ORDER BY id`
  )

export const readKeyFile = (file: string) =>
  JSON.parse(fs.readFileSync(file, "utf8")) as {
    data: { id: string; servicePrincipalId: string; name: string; expiresAt: string; key: string }
    meta: { installationId: string }
  }

export const startApi = async (url: string, dir: string) => {
  const port = await freePort()
  const api = svc("api", { ...productionEnv(url, dir), SVC_PORT: String(port) })
  await api.waitFor(/svc api listening/)
  return { api, baseUrl: `http://127.0.0.1:${port}` }
}

export const issueKey = (baseUrl: string, apiKey: string, body: unknown) =>
  call(`${baseUrl}/api/auth/service-keys`, {
    method: "POST",
    headers: { "x-api-key": apiKey, "content-type": "application/json" },
    body: JSON.stringify(body)
  })

export const revokeKey = (baseUrl: string, apiKey: string, keyId: string) =>
  call(`${baseUrl}/api/auth/service-keys/${keyId}`, { method: "DELETE", headers: { "x-api-key": apiKey } })

export const UNKNOWN_KEY = "key_00000000-0000-4000-8000-000000000000"

