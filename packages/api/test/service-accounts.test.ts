import { describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { SecretDriver } from "@svc/core/drivers/secret"
import { ServiceAccountId } from "@svc/core/schema"
import { Effect, Redacted } from "effect"
import * as fs from "node:fs"
import { LogCapture, TestServer } from "../../../testing/server.js"
import { auditKinds, expectData, expectError, type Result, seedAdmin, seedNamespace, send, TIMESTAMP } from "./support/iamServer.js"
import { accountsPath, ADMIN_KEY, createAccount, issue, managedApiLayer, rows, Vendor, WORKSPACE_ID } from "./support/serviceAccountWorld.js"

describe("service accounts with the model_accounts Backend (SPEC 4.5, DESIGN §13)", () => {
  it.layer(managedApiLayer(), { timeout: 120_000 })((it) => {
    it.effect("create links an upstream account named <name>-<id>; issue gives one sealed access_token; the second is 409", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const vendor = yield* Vendor
        const admin = yield* seedAdmin("sa-happy@example.com")
        const ns = yield* seedNamespace("sa-happy")
        const created = yield* createAccount(baseUrl, admin.headers, ns, "builder")
        const account = expectData(created, 201)
        expect(account).toEqual({
          id: expect.stringMatching(/^sa_[0-9a-f-]{36}$/),
          namespaceId: ns,
          name: "builder",
          managed: true,
          state: "ready",
          credential: null,
          createdAt: expect.stringMatching(TIMESTAMP)
        })
        expect(vendor.accounts().filter((a) => a.name === `builder-${account.id}`)).toHaveLength(1)
        expect(created.text).not.toContain("vsa_")
        expect(expectData(yield* send(baseUrl, "GET", `${accountsPath(ns)}/${account.id}`, admin.headers), 200)).toEqual(account)

        const issued = yield* issue(baseUrl, admin.headers, ns, account.id)
        const withCredential = expectData(issued, 201)
        expect(withCredential).toEqual({
          ...account,
          credential: { kind: "access_token", ready: true, issuedAt: expect.stringMatching(TIMESTAMP), expiresAt: expect.stringMatching(TIMESTAMP) }
        })
        const [credential] = vendor.credentials().filter((c) => c.service_account_id === vendor.accounts().find((a) => a.name === `builder-${account.id}`)!.id)
        expect(credential).toMatchObject({ name: account.id, ttl: 3600, scopes: ["inference"] })
        // The token is in the sealed record only: never in a response or an audit row.
        expect(issued.text).not.toContain(credential!.access_token)
        const sql = yield* SqlClient.SqlClient
        const [sealed] = yield* sql<{ key_id: string; nonce: Uint8Array; ciphertext: Uint8Array; tag: Uint8Array }>`
          SELECT key_id, nonce, ciphertext, tag FROM service_account_credentials WHERE service_account_id = ${account.id}
        `
        const secrets = yield* SecretDriver
        const revealed = JSON.parse(Redacted.value(yield* secrets.reveal({ keyId: sealed!.key_id, nonce: sealed!.nonce, ciphertext: sealed!.ciphertext, tag: sealed!.tag })))
        expect(revealed).toEqual({ token: credential!.access_token, "workspace-id": WORKSPACE_ID })
        const audit = yield* auditKinds(account.id)
        expect(audit.map((a) => a.kind)).toEqual(["service_account.created", "service_account.credential_issued"])
        expect(JSON.stringify(audit)).not.toContain(credential!.access_token)

        expectError(yield* issue(baseUrl, admin.headers, ns, account.id), 409, "RESOURCE_CONFLICT")
        expect(vendor.credentials().filter((c) => c.name === account.id)).toHaveLength(1)
        // Backend-managed: no native reference, and access_token can never be set.
        expectError(yield* send(baseUrl, "PATCH", `${accountsPath(ns)}/${account.id}/credential`, admin.headers, { kind: "api_key", secretRef: { name: "x", key: "value" } }), 409, "RESOURCE_CONFLICT")
        expectError(yield* send(baseUrl, "PATCH", `${accountsPath(ns)}/${account.id}/credential`, admin.headers, { kind: "access_token", secretRef: { name: "x", key: "value" } }), 400, "INVALID_REQUEST")
      }))

    it.effect("delete removes the upstream credential, the sealed record and the upstream account, in that order, then the row", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const vendor = yield* Vendor
        const admin = yield* seedAdmin("sa-delete@example.com")
        const ns = yield* seedNamespace("sa-delete")
        const account = expectData(yield* createAccount(baseUrl, admin.headers, ns, "gone"), 201)
        expectData(yield* issue(baseUrl, admin.headers, ns, account.id), 201)
        const upstream = vendor.accounts().find((a) => a.name === `gone-${account.id}`)!
        const credentialId = vendor.credentials().find((c) => c.service_account_id === upstream.id)!.id
        const before = vendor.requests().length

        // The upstream credential delete fails: nothing further happens, the account is `deleting`.
        vendor.failNext("delete-credential", { kind: "status", status: 502, code: "bad_gateway" })
        expectError(yield* send(baseUrl, "DELETE", `${accountsPath(ns)}/${account.id}`, admin.headers), 503, "DEPENDENCY_UNAVAILABLE")
        expect(yield* rows(account.id)).toEqual({ accounts: ["deleting"], sealed: 1 })
        expect(vendor.accounts().some((a) => a.id === upstream.id)).toBe(true)
        expect(expectData(yield* send(baseUrl, "GET", `${accountsPath(ns)}/${account.id}`, admin.headers), 200)).toMatchObject({
          state: "deleting",
          credential: { kind: "access_token", ready: false }
        })
        expectError(yield* issue(baseUrl, admin.headers, ns, account.id), 409, "RESOURCE_CONFLICT")

        // Repeating DELETE resumes; the vendor restarted in between and kept its state.
        yield* Effect.promise(() => vendor.restart())
        const deleted = yield* send(baseUrl, "DELETE", `${accountsPath(ns)}/${account.id}`, admin.headers)
        expect(deleted.status).toBe(204)
        expect(deleted.text).toBe("")
        expect(yield* rows(account.id)).toEqual({ accounts: [], sealed: 0 })
        expect(vendor.accounts().some((a) => a.id === upstream.id)).toBe(false)
        expect(vendor.credentials().some((c) => c.id === credentialId)).toBe(false)
        expect(vendor.requests().slice(before).map((r) => `${r.method} ${r.path.replace(WORKSPACE_ID, "ws")}`)).toEqual([
          `DELETE /v1/manage/workspaces/ws/service-accounts/${upstream.id}/credentials/${credentialId}`,
          `DELETE /v1/manage/workspaces/ws/service-accounts/${upstream.id}/credentials/${credentialId}`,
          `DELETE /v1/manage/workspaces/ws/service-accounts/${upstream.id}`
        ])
        expectError(yield* send(baseUrl, "GET", `${accountsPath(ns)}/${account.id}`, admin.headers), 404, "NOT_FOUND")
        expect((yield* auditKinds(account.id)).map((a) => a.kind)).toEqual([
          "service_account.created",
          "service_account.credential_issued",
          "service_account.deleted"
        ])
      }))

    it.effect("upstream refusals (401, 403, 429, 4xx) answer 503 and leave nothing behind", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const vendor = yield* Vendor
        const admin = yield* seedAdmin("sa-refusals@example.com")
        const ns = yield* seedNamespace("sa-refusals")
        const sql = yield* SqlClient.SqlClient
        const count = sql<{ n: number }>`SELECT count(*)::int AS n FROM service_accounts WHERE namespace_id = ${ns}`
        for (const [status, code] of [[401, "invalid_api_key"], [403, "permission_denied"], [429, "rate_limited"], [400, "invalid_request"]] as const) {
          vendor.failNext("create-account", { kind: "status", status, code })
          const result = yield* createAccount(baseUrl, admin.headers, ns, `refused-${status}`)
          expectError(result, 503, "DEPENDENCY_UNAVAILABLE")
          expect(result.text).not.toContain(code)
        }
        expect((yield* count)[0]!.n).toBe(0)
        expect(vendor.accounts().filter((a) => a.name.startsWith("refused-"))).toEqual([])

        // A rotated admin key file takes effect without a restart; the old key is refused.
        vendor.rotateKey("rotated-admin-key-9876543210")
        expectError(yield* createAccount(baseUrl, admin.headers, ns, "stale-key"), 503, "DEPENDENCY_UNAVAILABLE")
        fs.writeFileSync(vendor.keyFile, "rotated-admin-key-9876543210")
        const account = expectData(yield* createAccount(baseUrl, admin.headers, ns, "fresh-key"), 201)
        vendor.rotateKey(ADMIN_KEY)
        fs.writeFileSync(vendor.keyFile, ADMIN_KEY)

        // Issuance refused upstream: nothing recorded, and a later issuance works.
        vendor.failNext("issue-credential", { kind: "status", status: 403, code: "permission_denied" })
        expectError(yield* issue(baseUrl, admin.headers, ns, account.id), 503, "DEPENDENCY_UNAVAILABLE")
        expect(yield* rows(account.id)).toEqual({ accounts: ["ready"], sealed: 0 })
        expectData(yield* issue(baseUrl, admin.headers, ns, account.id), 201)
      }))

    it.effect("an Idempotency-Key replays the create; concurrent issuances give one credential and one 409", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const vendor = yield* Vendor
        const admin = yield* seedAdmin("sa-idempotent@example.com")
        const ns = yield* seedNamespace("sa-idempotent")
        const headers = { ...admin.headers, "idempotency-key": "create-sa-1" }
        const first = yield* send(baseUrl, "POST", accountsPath(ns), headers, { name: "once" })
        const again = yield* send(baseUrl, "POST", accountsPath(ns), headers, { name: "once" })
        expect(again.status).toBe(201)
        expect(again.headers.get("idempotent-replayed")).toBe("true")
        expect(again.body.data).toEqual(expectData(first, 201))
        expect(vendor.accounts().filter((a) => a.name.startsWith("once-"))).toHaveLength(1)

        const id = first.body.data.id
        vendor.failNext("issue-credential", { kind: "slow", delayMs: 300 })
        const [a, b] = yield* Effect.all([issue(baseUrl, admin.headers, ns, id), issue(baseUrl, admin.headers, ns, id)], { concurrency: 2 })
        expect([a.status, b.status].sort()).toEqual([201, 409])
        expect(vendor.credentials().filter((c) => c.name === id)).toHaveLength(1)
      }))

    it.effect("a lost create answer is adopted by name: never a second upstream account", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const vendor = yield* Vendor
        const admin = yield* seedAdmin("sa-lost@example.com")
        const ns = yield* seedNamespace("sa-lost")
        // The upstream acts, the connection closes: the Driver finds the account and links it.
        vendor.failNext("create-account", { kind: "lost" })
        const adopted = expectData(yield* createAccount(baseUrl, admin.headers, ns, "lost"), 201)
        expect(adopted.state).toBe("ready")
        expect(vendor.accounts().filter((a) => a.name === `lost-${adopted.id}`)).toHaveLength(1)

        // Lost, and the lookup fails too: the account stays `creating` (503); issuing adopts it.
        vendor.failNext("create-account", { kind: "lost" })
        vendor.failNext("list-accounts", { kind: "status", status: 503, code: "overloaded" })
        const sql = yield* SqlClient.SqlClient
        expectError(yield* createAccount(baseUrl, admin.headers, ns, "lost-twice"), 503, "DEPENDENCY_UNAVAILABLE")
        const [pending] = yield* sql<{ id: string; state: string }>`SELECT id, state FROM service_accounts WHERE name = 'lost-twice'`
        expect(pending!.state).toBe("creating")
        expect(expectData(yield* send(baseUrl, "GET", `${accountsPath(ns)}/${pending!.id}`, admin.headers), 200)).toMatchObject({ state: "creating", credential: null })
        expect(expectData(yield* issue(baseUrl, admin.headers, ns, pending!.id), 201)).toMatchObject({ state: "ready", credential: { kind: "access_token", ready: true } })
        expect(vendor.accounts().filter((a) => a.name === `lost-twice-${pending!.id}`)).toHaveLength(1)
      }))

    it.effect("a slow answer past the deadline, a 5xx and an unreachable vendor leave a `creating` account that delete cleans up", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const vendor = yield* Vendor
        const admin = yield* seedAdmin("sa-slow@example.com")
        const ns = yield* seedNamespace("sa-slow")
        const sql = yield* SqlClient.SqlClient
        const idOf = (name: string) => Effect.map(sql<{ id: string }>`SELECT id FROM service_accounts WHERE name = ${name}`, (r) => r[0]!.id)

        // Slow: the upstream creates after our deadline; the account is found by name at delete.
        vendor.failNext("create-account", { kind: "slow", delayMs: 2500 })
        expectError(yield* createAccount(baseUrl, admin.headers, ns, "slow"), 503, "DEPENDENCY_UNAVAILABLE")
        const slow = yield* idOf("slow")
        yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 2000)))
        expect(vendor.accounts().filter((a) => a.name === `slow-${slow}`)).toHaveLength(1)
        expect((yield* send(baseUrl, "DELETE", `${accountsPath(ns)}/${slow}`, admin.headers)).status).toBe(204)
        expect(vendor.accounts().filter((a) => a.name === `slow-${slow}`)).toEqual([])

        // 500: unknown whether it acted (here it did not); issuing finds nothing (409), delete removes the row.
        vendor.failNext("create-account", { kind: "status", status: 500, code: "internal_error" })
        expectError(yield* createAccount(baseUrl, admin.headers, ns, "failed"), 503, "DEPENDENCY_UNAVAILABLE")
        const failed = yield* idOf("failed")
        expectError(yield* issue(baseUrl, admin.headers, ns, failed), 409, "RESOURCE_CONFLICT")
        expect((yield* send(baseUrl, "DELETE", `${accountsPath(ns)}/${failed}`, admin.headers)).status).toBe(204)
        expect(yield* rows(failed)).toEqual({ accounts: [], sealed: 0 })

        // Unreachable, then back after a restart.
        yield* Effect.promise(() => vendor.stop())
        expectError(yield* createAccount(baseUrl, admin.headers, ns, "unreachable"), 503, "DEPENDENCY_UNAVAILABLE")
        const unreachable = yield* idOf("unreachable")
        expectError(yield* send(baseUrl, "DELETE", `${accountsPath(ns)}/${unreachable}`, admin.headers), 503, "DEPENDENCY_UNAVAILABLE")
        yield* Effect.promise(() => vendor.restart())
        expect((yield* send(baseUrl, "DELETE", `${accountsPath(ns)}/${unreachable}`, admin.headers)).status).toBe(204)
        const back = expectData(yield* createAccount(baseUrl, admin.headers, ns, "after-restart"), 201)
        expect(vendor.accounts().filter((a) => a.name === `after-restart-${back.id}`)).toHaveLength(1)
      }))

    // --- secrets scan (issue 13): the issued token and the admin key appear nowhere we keep or send ---
    it.effect("secrets scan: no response, log line, audit row or stored row holds the token or the admin key", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const vendor = yield* Vendor
        const admin = yield* seedAdmin("sa-scan@example.com")
        const ns = yield* seedNamespace("sa-scan")
        const responses: Array<Result> = []
        const created = yield* createAccount(baseUrl, admin.headers, ns, "scan")
        responses.push(created)
        const id = expectData(created, 201).id
        responses.push(yield* issue(baseUrl, admin.headers, ns, id))
        responses.push(yield* issue(baseUrl, admin.headers, ns, id))
        vendor.failNext("create-account", { kind: "status", status: 401, code: "invalid_api_key" })
        responses.push(yield* createAccount(baseUrl, admin.headers, ns, "scan-refused"))
        responses.push(yield* send(baseUrl, "GET", accountsPath(ns), admin.headers))
        responses.push(yield* send(baseUrl, "GET", `${accountsPath(ns)}/${id}`, admin.headers))
        const tokens = vendor.credentials().map((c) => c.access_token)
        expect(tokens.length).toBeGreaterThan(0)
        const logs = yield* LogCapture
        const sql = yield* SqlClient.SqlClient
        const audit = yield* sql<{ row: string }>`SELECT row_to_json(a)::text AS row FROM audit_events a`
        const stored = yield* sql<{ row: string }>`
          SELECT row_to_json(a)::text AS row FROM service_accounts a
          UNION ALL SELECT (to_jsonb(c) || jsonb_build_object('bytes', encode(c.ciphertext, 'escape')))::text FROM service_account_credentials c
        `
        const haystacks = [
          ...responses.map((r) => r.text),
          ...logs.entries.map((entry) => JSON.stringify(entry)),
          ...audit.map((a) => a.row),
          ...stored.map((r) => r.row)
        ]
        expect(stored.length).toBeGreaterThan(1)
        for (const value of [...tokens, ADMIN_KEY]) {
          for (const haystack of haystacks) expect(haystack.includes(value), haystack.slice(0, 200)).toBe(false)
        }
      }))
    // --- end secrets scan ---

    it.effect("GET /installation and GET /backends reflect the selection and call no upstream", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const vendor = yield* Vendor
        const admin = yield* seedAdmin("sa-backends@example.com")
        const before = vendor.requests().length
        const backends = yield* send(baseUrl, "GET", "/backends", admin.headers)
        expect(expectData(backends, 200)).toEqual([{ id: "accounts-main", type: "model_accounts" }])
        for (const hidden of [WORKSPACE_ID, vendor.keyFile, "modelvendor", "credentialTtlSeconds"]) expect(backends.text).not.toContain(hidden)
        expect(expectData(yield* send(baseUrl, "GET", "/installation", admin.headers), 200)).toEqual({
          capabilities: { agentProvisioning: { executionModes: ["embedded"] } },
          diagnostics: expect.any(Array)
        })
        expect(vendor.requests().length).toBe(before)
        expectError(yield* send(baseUrl, "GET", `${accountsPath(yield* seedNamespace("sa-none"))}/${ServiceAccountId.make()}`, admin.headers), 404, "NOT_FOUND")
      }))
  })
})
