/**
 * The bootstrap initializer (SPEC 5.6) as operators run it: `svc migrate`, `svc bootstrap`,
 * `svc api` and `npm start` as real child processes against a real database.
 */
import { describe, expect, it } from "@effect/vitest"
import { verifyPassword } from "@svc/api"
import { Effect } from "effect"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { createDatabase, dropDatabase } from "../../../testing/database.js"
import { REQUEST_ID } from "../../../testing/server.js"
import {
  EMAIL,
  query,
  outputDir,
  productionEnv,
  run,
  migrated,
  snapshot,
  nothing,
  failureAudits,
  readKeyFile,
  startApi,
  issueKey,
  revokeKey,
  UNKNOWN_KEY
} from "./support/bootstrap.js"

describe("svc bootstrap (production)", () => {
  it.live("creates the Installation once; the key works in every API process and revocation reaches them all", () =>
    Effect.promise(async () => {
      const url = await migrated()
      const dir = outputDir("production")
      const env = productionEnv(url, dir)
      const first = await run("bootstrap", env)
      expect(first.exit.code, first.output).toBe(0)
      expect(first.output).toContain(`bootstrap key written to ${env.SVC_BOOTSTRAP_KEY_PATH}`)

      // The one-time outputs: owner-only, exactly the SPEC 5.6 shape.
      expect(fs.statSync(env.SVC_BOOTSTRAP_KEY_PATH).mode & 0o777).toBe(0o600)
      expect(fs.statSync(env.SVC_BOOTSTRAP_PASSWORD_PATH).mode & 0o777).toBe(0o600)
      const output = readKeyFile(env.SVC_BOOTSTRAP_KEY_PATH)
      expect(output).toEqual({
        data: {
          id: expect.stringMatching(/^key_[0-9a-f-]{36}$/),
          servicePrincipalId: expect.stringMatching(/^sp_[0-9a-f-]{36}$/),
          name: "bootstrap-admin",
          expiresAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
          key: expect.stringMatching(/^svck_[A-Za-z0-9_-]{43}$/)
        },
        meta: { installationId: expect.stringMatching(/^inst_[0-9a-f-]{36}$/) }
      })
      const lifetime = Date.parse(output.data.expiresAt) - Date.now()
      expect(Math.abs(lifetime - 30 * 86_400_000)).toBeLessThan(120_000)
      const password = fs.readFileSync(env.SVC_BOOTSTRAP_PASSWORD_PATH, "utf8").trim()
      expect(password.length).toBeGreaterThanOrEqual(12)

      // What it created, all in one commit.
      expect(await snapshot(url)).toEqual({
        installations: 1, principals: 2, accounts: 1, bindings: 2, namespaces: 1, keys: 1, work: 1, audits: 1
      })
      const [installation] = await query(url, `SELECT id FROM installation`)
      expect(installation!.id).toBe(output.meta.installationId)
      const principals = await query(url, `SELECT id, kind, namespace_id FROM principals ORDER BY kind`)
      expect(principals).toEqual([
        { id: expect.any(String), kind: "human", namespace_id: null },
        { id: output.data.servicePrincipalId, kind: "service", namespace_id: null }
      ])
      const bindings = await query(url, `SELECT principal_id, role_id, resource_kind FROM access_bindings ORDER BY principal_id`)
      expect(new Set(bindings.map((b) => b.principal_id))).toEqual(new Set(principals.map((p) => p.id)))
      for (const binding of bindings) {
        expect(binding).toMatchObject({ role_id: "role_00000000-0000-4000-8000-000000000001", resource_kind: "installation" })
      }
      const [account] = await query(url, `
        SELECT a.email, a.principal_id, m.password_hash FROM accounts a JOIN account_methods m ON m.account_id = a.id
      `)
      expect(account!.email).toBe(EMAIL.toLowerCase())
      expect(account!.principal_id).toBe(principals[0]!.id)
      expect(await Effect.runPromise(verifyPassword(account!.password_hash, password))).toBe(true)
      const [namespace] = await query(url, `SELECT id, name, status FROM namespaces`)
      expect(namespace).toMatchObject({ name: "default", status: "provisioning" })
      const work = await query(url, `SELECT kind, key, state FROM work_items`)
      expect(work).toEqual([{ kind: "namespace.provision", key: namespace!.id, state: "queued" }])
      const [stored] = await query(url, `SELECT id, name, namespace_id, service_principal_id, revoked_at FROM service_keys`)
      expect(stored).toEqual({
        id: output.data.id,
        name: "bootstrap-admin",
        namespace_id: null,
        service_principal_id: output.data.servicePrincipalId,
        revoked_at: null
      })

      // Two API processes on one database: the key works on both; a key revoked through one
      // is refused by the other on its next request.
      const a = await startApi(url, dir)
      const b = await startApi(url, dir)
      const responses: Array<string> = []
      let issued: Awaited<ReturnType<typeof issueKey>>
      try {
        issued = await issueKey(a.baseUrl, output.data.key, { servicePrincipalId: output.data.servicePrincipalId, name: "ops" })
        responses.push(issued.text)
        expect(issued.status, issued.text).toBe(201)
        const second = issued.body.data as { id: string; key: string }
        const before = await revokeKey(b.baseUrl, second.key, UNKNOWN_KEY)
        responses.push(before.text)
        expect(before.status, before.text).toBe(404)
        const revoked = await revokeKey(a.baseUrl, output.data.key, second.id)
        responses.push(revoked.text)
        expect(revoked.status, revoked.text).toBe(200)
        expect(revoked.body).toEqual({ data: { id: second.id, revoked: true }, meta: { requestId: expect.stringMatching(REQUEST_ID) } })
        const after = await revokeKey(b.baseUrl, second.key, UNKNOWN_KEY)
        responses.push(after.text)
        expect(after.status).toBe(401)
        expect(after.body.error.code).toBe("UNAUTHENTICATED")
        // The bootstrap key itself still works on both.
        for (const api of [a, b]) {
          const check = await revokeKey(api.baseUrl, output.data.key, UNKNOWN_KEY)
          responses.push(check.text)
          expect(check.status).toBe(404)
        }
      } finally {
        await a.api.stop()
        await b.api.stop()
      }

      // Credentials never appear in logs, audit records or other responses.
      const logs = [first.output, a.api.output(), b.api.output()].join("\n")
      const secondKey = (issued.body.data as { key: string }).key
      for (const secret of [output.data.key, password, secondKey]) {
        expect(logs).not.toContain(secret)
      }
      expect(responses.filter((text) => text.includes(secondKey))).toEqual([issued.text])
      expect(responses.filter((text) => text.includes(output.data.key))).toEqual([])
      const audit = await query(url, `SELECT coalesce(string_agg(row_to_json(a)::text, ''), '') AS text FROM audit_events a`)
      expect(audit[0]!.text).not.toMatch(/svck_/)
      expect(audit[0]!.text).not.toContain(password)
      const [bootstrapped] = await query(url, `SELECT details FROM audit_events WHERE kind = 'installation.bootstrapped'`)
      expect(bootstrapped!.details).toMatchObject({
        servicePrincipalId: output.data.servicePrincipalId,
        serviceKeyId: output.data.id,
        namespaceId: namespace!.id,
        keyPath: env.SVC_BOOTSTRAP_KEY_PATH,
        passwordPath: env.SVC_BOOTSTRAP_PASSWORD_PATH
      })

      // A second run creates nothing and writes nothing, even with the outputs gone.
      fs.rmSync(env.SVC_BOOTSTRAP_KEY_PATH)
      fs.rmSync(env.SVC_BOOTSTRAP_PASSWORD_PATH)
      const again = await run("bootstrap", env)
      expect(again.exit.code, again.output).toBe(0)
      expect(again.output).toContain("installation already bootstrapped")
      expect(fs.existsSync(env.SVC_BOOTSTRAP_KEY_PATH)).toBe(false)
      expect(fs.existsSync(env.SVC_BOOTSTRAP_PASSWORD_PATH)).toBe(false)
      expect(await snapshot(url)).toEqual({
        installations: 1, principals: 2, accounts: 1, bindings: 2, namespaces: 1, keys: 2, work: 1, audits: 1
      })
      await dropDatabase(url)
    }), 180_000)

  const refusals: ReadonlyArray<readonly [string, (dir: string, keyPath: string) => void, string]> = [
    ["an existing key file", (_dir, keyPath) => fs.writeFileSync(keyPath, "operator data\n", { mode: 0o600 }), "output-exists"],
    ["a symbolic link at the key path", (dir, keyPath) => fs.symlinkSync(path.join(dir, "elsewhere.json"), keyPath), "output-exists"],
    ["a world-writable directory", (dir) => fs.chmodSync(dir, 0o777), "output-unsafe-directory"],
    ["a group-writable directory", (dir) => fs.chmodSync(dir, 0o770), "output-unsafe-directory"],
    [
      "an existing password file",
      (dir) => fs.writeFileSync(path.join(dir, "bootstrap-password.txt"), "x\n", { mode: 0o600 }),
      "output-exists"
    ]
  ]
  for (const [name, prepare, reason] of refusals) {
    it.live(`fails closed on ${name}: nothing created, failure audited, exit non-zero`, () =>
      Effect.promise(async () => {
        const url = await migrated()
        const dir = outputDir(`refuse-${reason}-${crypto.randomBytes(3).toString("hex")}`)
        const env = productionEnv(url, dir)
        prepare(dir, env.SVC_BOOTSTRAP_KEY_PATH)
        const before = fs.readdirSync(dir).map((entry) => [entry, fs.lstatSync(path.join(dir, entry)).mtimeMs])
        const result = await run("bootstrap", env)
        expect(result.exit.code, result.output).not.toBe(0)
        expect(result.output).toContain("bootstrap failed")
        expect(await snapshot(url)).toEqual(nothing)
        // Nothing was replaced or added; a symbolic link was not followed.
        expect(fs.readdirSync(dir).map((entry) => [entry, fs.lstatSync(path.join(dir, entry)).mtimeMs])).toEqual(before)
        expect(fs.existsSync(path.join(dir, "elsewhere.json"))).toBe(false)
        const audits = await failureAudits(url)
        expect(audits).toHaveLength(1)
        expect(audits[0]!.outcome).toBe("failure")
        expect(audits[0]!.details).toMatchObject({
          reason,
          keyPath: env.SVC_BOOTSTRAP_KEY_PATH,
          passwordPath: env.SVC_BOOTSTRAP_PASSWORD_PATH,
          installationId: expect.stringMatching(/^inst_/)
        })
        fs.chmodSync(dir, 0o700)
        await dropDatabase(url)
      }), 60_000)
  }

  it.live("a failure inside the transaction commits nothing, writes no key, and is audited", () =>
    Effect.promise(async () => {
      const url = await migrated()
      const dir = outputDir("in-transaction")
      const env = productionEnv(url, dir)
      // A live Namespace already named `default` makes the Namespace creation path refuse.
      await query(url, `INSERT INTO namespaces (id, name, status) VALUES ('ns_00000000-0000-4000-8000-000000000000', 'default', 'ready')`)
      const result = await run("bootstrap", env)
      expect(result.exit.code, result.output).not.toBe(0)
      expect(result.output).toContain("bootstrap failed: a Namespace named default already exists")
      expect(await snapshot(url)).toEqual({ ...nothing, namespaces: 1 })
      expect(fs.existsSync(env.SVC_BOOTSTRAP_KEY_PATH)).toBe(false)
      const audits = await failureAudits(url)
      expect(audits.map((a) => a.details.reason)).toEqual(["namespace-exists"])
      await dropDatabase(url)
    }), 60_000)

  it.live("two initializers at once: one Installation, one key file, both exit 0", () =>
    Effect.promise(async () => {
      const url = await migrated()
      const dir = outputDir("race")
      const env = productionEnv(url, dir)
      const results = await Promise.all([run("bootstrap", env), run("bootstrap", env)])
      for (const result of results) expect(result.exit.code, result.output).toBe(0)
      const created = results.filter((result) => result.output.includes("bootstrap key written"))
      expect(created).toHaveLength(1)
      expect(results.filter((result) => result.output.includes("installation already bootstrapped"))).toHaveLength(1)
      expect(await snapshot(url)).toEqual({
        installations: 1, principals: 2, accounts: 1, bindings: 2, namespaces: 1, keys: 1, work: 1, audits: 1
      })
      const [installation] = await query(url, `SELECT id FROM installation`)
      expect(readKeyFile(env.SVC_BOOTSTRAP_KEY_PATH).meta.installationId).toBe(installation!.id)
      expect(await failureAudits(url)).toEqual([])
      await dropDatabase(url)
    }), 60_000)

  it.live("an unmigrated database: exit non-zero, naming svc migrate", () =>
    Effect.promise(async () => {
      const url = await createDatabase()
      const result = await run("bootstrap", productionEnv(url, outputDir("unmigrated")))
      expect(result.exit.code).not.toBe(0)
      expect(result.output).toContain("run svc migrate first")
      await dropDatabase(url)
    }), 60_000)

  it.live("production needs the output paths and the administrator email (exit 78)", () =>
    Effect.promise(async () => {
      const url = await createDatabase()
      const env: Record<string, string> = productionEnv(url, outputDir("config"))
      delete env.SVC_BOOTSTRAP_KEY_PATH
      delete env.SVC_BOOTSTRAP_ADMIN_EMAIL
      const result = await run("bootstrap", env)
      expect(result.exit.code).toBe(78)
      expect(result.output).toMatch(/SVC_BOOTSTRAP_KEY_PATH/)
      expect(result.output).toMatch(/SVC_BOOTSTRAP_ADMIN_EMAIL/)
      await dropDatabase(url)
    }), 60_000)
})
