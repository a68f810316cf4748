/**
 * Idempotent writes (DESIGN §18) over the real API and database: a repeat replays the first
 * response without acting again, another body or path is 409, keys are per principal, parallel
 * repeats act once, a malformed key changes nothing, secret-bearing responses are never stored,
 * deploy, stop and redeploy are covered, and the worker's sweep removes expired keys.
 */
import { describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { IdempotencyKeysRepo } from "@svc/core/db"
import { sweepIdempotencyKeys } from "@svc/worker"
import { Effect } from "effect"
import * as http from "node:http"
import { RoleId } from "@svc/core/schema"
import { bindRole, createServicePrincipal } from "../../../testing/identity.js"
import { REQUEST_ID, TestServer } from "../../../testing/server.js"
import { apiTestLayer, expectData, expectError, type Headers, type Result, seedAdmin, seedNamespace, send } from "./support/iamServer.js"

const KEY_DETAIL = [{ code: "INVALID_VALUE", path: "/headers/idempotency-key" }]

const keyed = (headers: Headers, key: string): Headers => ({ ...headers, "idempotency-key": key })

const count = (table: string, where: string, value: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM ${sql(table)} WHERE ${sql(where)} = ${value}`
    return rows[0]!.n
  })

const keyRows = (key: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    return yield* sql<{ principal_id: string; method: string; path: string; status: number | null; response_body: unknown; withheld: boolean }>`
      SELECT principal_id, method, path, status, response_body, withheld FROM idempotency_keys WHERE key = ${key} ORDER BY principal_id
    `
  })

/** The replay equals the first response but for its request id, and says it is a replay. */
const expectReplay = (first: Result, replay: Result) => {
  expect(replay.status).toBe(first.status)
  expect(replay.headers.get("idempotent-replayed")).toBe("true")
  expect(first.headers.get("idempotent-replayed")).toBeNull()
  expect(replay.body.meta.requestId).toMatch(REQUEST_ID)
  expect(replay.body.meta.requestId).not.toBe(first.body.meta.requestId)
  expect(replay.headers.get("x-request-id")).toBe(replay.body.meta.requestId)
  expect({ ...replay.body, meta: undefined }).toEqual({ ...first.body, meta: undefined })
}

/** POSTs `bytes` of filler with chunked transfer encoding (no Content-Length); the status, or "closed". */
const chunkedPost = (url: string, headers: Headers, bytes: number) =>
  new Promise<string>((resolve) => {
    const request = http.request(url, { method: "POST", headers: { ...headers, "content-type": "application/json" } }, (response) => {
      response.resume()
      response.on("end", () => resolve(String(response.statusCode)))
      response.on("error", () => resolve("closed"))
    })
    request.on("error", () => resolve("closed"))
    const filler = "x".repeat(16 * 1024)
    let written = 0
    const pump = () => {
      while (written < bytes) {
        written += filler.length
        if (!request.write(filler)) return void request.once("drain", pump)
      }
      request.end()
    }
    pump()
  })

describe("Idempotency-Key", () => {
  it.layer(apiTestLayer(), { timeout: 120_000 })((it) => {
    it.effect("a repeat replays status and body with a new requestId, acting once; key order and spacing do not matter", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdmin("idem-replay@example.com")
        const ns = yield* seedNamespace("idem-replay")
        const path = `/namespaces/${ns}/secrets`
        const first = yield* send(baseUrl, "POST", path, keyed(admin.headers, "create-1"), { name: "db", value: "s3cr3t-idem-value" })
        const created = expectData(first, 201)
        const again = yield* send(baseUrl, "POST", path, keyed(admin.headers, "create-1"), '{ "value": "s3cr3t-idem-value",  "name": "db" }')
        expectReplay(first, again)
        expect(yield* count("secrets", "namespace_id", ns)).toBe(1)
        expect(yield* count("audit_events", "resource_id", created.id)).toBe(1)
        const rows = yield* keyRows("create-1")
        expect(rows).toEqual([
          { principal_id: admin.principalId, method: "POST", path, status: 201, response_body: first.body, withheld: false }
        ])
        // The stored request digest is not the body: the Secret value appears nowhere in the table.
        const sql = yield* SqlClient.SqlClient
        const dump = yield* sql<{ row: string }>`SELECT to_jsonb(k)::text AS row FROM idempotency_keys k`
        expect(dump.map((r) => r.row).join("\n")).not.toContain("s3cr3t-idem-value")
      }))

    it.effect("another body, method or path under the same key is 409 RESOURCE_CONFLICT and acts not", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdmin("idem-conflict@example.com")
        const ns = yield* seedNamespace("idem-conflict")
        const headers = keyed(admin.headers, "conflict-key")
        expectData(yield* send(baseUrl, "POST", `/namespaces/${ns}/presets`, headers, { name: "p1", template: {} }), 201)
        expectError(yield* send(baseUrl, "POST", `/namespaces/${ns}/presets`, headers, { name: "p2", template: {} }), 409, "RESOURCE_CONFLICT", KEY_DETAIL)
        expectError(yield* send(baseUrl, "POST", `/namespaces/${ns}/configurations`, headers, { kind: "agent", values: {} }), 409, "RESOURCE_CONFLICT", KEY_DETAIL)
        expect(yield* count("presets", "namespace_id", ns)).toBe(1)
        expect(yield* count("configurations", "namespace_id", ns)).toBe(0)
      }))

    it.effect("keys are per principal: the same key of two callers is two independent requests", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const one = yield* seedAdmin("idem-one@example.com")
        const two = yield* seedAdmin("idem-two@example.com")
        const a = expectData(yield* send(baseUrl, "POST", "/namespaces", keyed(one.headers, "shared"), { name: "idem-principal-a" }), 201)
        const b = yield* send(baseUrl, "POST", "/namespaces", keyed(two.headers, "shared"), { name: "idem-principal-b" })
        expect(expectData(b, 201).id).not.toBe(a.id)
        expect(b.headers.get("idempotent-replayed")).toBeNull()
        expect((yield* keyRows("shared")).map((r) => r.principal_id).sort()).toEqual([one.principalId, two.principalId].sort())
      }))

    it.effect("ten parallel repeats act once; every answer is the first response", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdmin("idem-parallel@example.com")
        const ns = yield* seedNamespace("idem-parallel")
        const post = send(baseUrl, "POST", `/namespaces/${ns}/configurations`, keyed(admin.headers, "parallel"), { kind: "agent", values: { a: 1 } })
        const results = yield* Effect.all(Array.from({ length: 10 }, () => post), { concurrency: "unbounded" })
        const originals = results.filter((r) => r.headers.get("idempotent-replayed") === null)
        expect(originals).toHaveLength(1)
        for (const result of results) expect({ status: result.status, data: result.body.data }).toEqual({ status: 201, data: originals[0]!.body.data })
        expect(new Set(results.map((r) => r.body.meta.requestId)).size).toBe(10)
        expect(yield* count("configurations", "namespace_id", ns)).toBe(1)
        expect(yield* count("audit_events", "resource_id", originals[0]!.body.data.id)).toBe(1)
      }))

    it.effect("a malformed key is 400 INVALID_REQUEST pointing at the header, and nothing is created or stored", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdmin("idem-invalid@example.com")
        const ns = yield* seedNamespace("idem-invalid")
        for (const key of ["", "a b", "x".repeat(256), "caf\u00e9"]) {
          const result = yield* send(baseUrl, "POST", `/namespaces/${ns}/presets`, keyed(admin.headers, key), { name: "p", template: {} })
          expectError(result, 400, "INVALID_REQUEST", [{ code: "INVALID_FORMAT", path: "/headers/idempotency-key" }])
        }
        expect(yield* count("presets", "namespace_id", ns)).toBe(0)
        expect(yield* count("idempotency_keys", "principal_id", admin.principalId)).toBe(0)
        // 255 visible characters is the longest key.
        expectData(yield* send(baseUrl, "POST", `/namespaces/${ns}/presets`, keyed(admin.headers, "~".repeat(255)), { name: "p", template: {} }), 201)
      }))

    it.effect("a 400 the request earns is kept and replayed; a 409 of the moment is released and the retry acts", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdmin("idem-errors@example.com")
        const ns = yield* seedNamespace("idem-errors")
        const path = `/namespaces/${ns}/presets`
        const bad = yield* send(baseUrl, "POST", path, keyed(admin.headers, "bad-body"), { name: "p" })
        expectError(bad, 400, "INVALID_REQUEST", [{ code: "REQUIRED", path: "/template" }])
        expectReplay(bad, yield* send(baseUrl, "POST", path, keyed(admin.headers, "bad-body"), { name: "p" }))

        expectData(yield* send(baseUrl, "POST", path, admin.headers, { name: "taken", template: {} }), 201)
        expectError(yield* send(baseUrl, "POST", path, keyed(admin.headers, "taken-name"), { name: "taken", template: {} }), 409, "RESOURCE_CONFLICT")
        expect(yield* keyRows("taken-name")).toEqual([])
        const sql = yield* SqlClient.SqlClient
        yield* sql`DELETE FROM presets WHERE namespace_id = ${ns} AND name = 'taken'`
        const retried = yield* send(baseUrl, "POST", path, keyed(admin.headers, "taken-name"), { name: "taken", template: {} })
        expectData(retried, 201)
        expect(retried.headers.get("idempotent-replayed")).toBeNull()
      }))

    it.effect("service-key issuance is never stored: a repeat issues no second key and answers 409", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdmin("idem-keys@example.com")
        const principalId = yield* createServicePrincipal("idem-ci")
        const body = { servicePrincipalId: principalId, name: "ci" }
        const issued = expectData(yield* send(baseUrl, "POST", "/api/auth/service-keys", keyed(admin.headers, "issue-1"), body), 201)
        const repeat = yield* send(baseUrl, "POST", "/api/auth/service-keys", keyed(admin.headers, "issue-1"), body)
        expectError(repeat, 409, "RESOURCE_CONFLICT", KEY_DETAIL)
        expect(repeat.text).not.toContain(issued.key)
        expect(yield* count("service_keys", "service_principal_id", principalId)).toBe(1)
        expect(yield* keyRows("issue-1")).toEqual([
          { principal_id: admin.principalId, method: "POST", path: "/api/auth/service-keys", status: 201, response_body: null, withheld: true }
        ])
      }))

    it.effect("deploy, stop and redeploy: a repeat replays the admitted revision and queues no second work item", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdmin("idem-deploy@example.com")
        const ns = yield* seedNamespace("idem-deploy")
        const sql = yield* SqlClient.SqlClient
        const call = (method: string, path: string, body?: unknown, key?: string) =>
          send(baseUrl, method, `/namespaces/${ns}/${path}`, key === undefined ? admin.headers : keyed(admin.headers, key), body)
        const secret = expectData(yield* call("POST", "secrets", { name: "model-key", value: "sk-idem" }), 201)
        const configuration = expectData(yield* call("POST", "configurations", { kind: "agent", values: {} }), 201)
        const harnessAuth = { method: "api_key", source: { kind: "secret", namespaceId: ns, id: secret.id } }
        const agent = expectData(yield* call("POST", "agents", { name: "bot", configurationId: configuration.id, harnessAuth }), 201)
        // The Agent's principal needs operate on the Secret it is given, as an operator grants it.
        const role = RoleId.make()
        yield* sql`INSERT INTO roles (id, namespace_id, name, permissions) VALUES (${role}, ${ns}, 'operate-model-key', ARRAY['secret:operate'])`
        yield* bindRole(agent.servicePrincipalId, role, { kind: "secret", id: secret.id, namespaceId: ns })
        const deployed = yield* call("POST", `agents/${agent.id}/deploy`, undefined, "deploy-1")
        const revision = expectData(deployed, 202)
        expectReplay(deployed, yield* call("POST", `agents/${agent.id}/deploy`, undefined, "deploy-1"))
        expect(yield* count("agent_revisions", "agent_id", agent.id)).toBe(1)
        const stopped = yield* call("POST", `agents/${agent.id}/stop`, undefined, "stop-1")
        expect(expectData(stopped, 202).desiredRuntimeState).toBe("stopped")
        expectReplay(stopped, yield* call("POST", `agents/${agent.id}/stop`, undefined, "stop-1"))
        // The stop key names another path: reusing it for deploy is a conflict, not a replay.
        expectError(yield* call("POST", `agents/${agent.id}/deploy`, undefined, "stop-1"), 409, "RESOURCE_CONFLICT", KEY_DETAIL)
        // Rollback (redeploy) opts in the same way: one new revision however often it is repeated.
        const redeployed = yield* call("POST", `agents/${agent.id}/revisions/${revision.id}/redeploy`, undefined, "redeploy-1")
        const rolledBack = expectData(redeployed, 202)
        expect(rolledBack.rolledBackFrom).toBe(revision.id)
        expectReplay(redeployed, yield* call("POST", `agents/${agent.id}/revisions/${revision.id}/redeploy`, undefined, "redeploy-1"))
        expect(yield* count("agent_revisions", "agent_id", agent.id)).toBe(2)
        const work = yield* sql<{ kind: string; key: string }>`SELECT kind, key FROM work_items WHERE payload->>'agentId' = ${agent.id} ORDER BY kind, created_at`
        expect(work).toEqual([
          { kind: "agent.deploy", key: revision.id },
          { kind: "agent.deploy", key: rolledBack.id },
          { kind: "agent.stop", key: agent.id }
        ])
      }))

    it.effect("a bodyless route with a key ignores a chunked body over the limit and still answers", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdmin("idem-chunked@example.com")
        const ns = yield* seedNamespace("idem-chunked")
        const call = (method: string, path: string, body?: unknown) => send(baseUrl, method, `/namespaces/${ns}/${path}`, admin.headers, body)
        const secret = expectData(yield* call("POST", "secrets", { name: "model-key", value: "sk-chunked" }), 201)
        const configuration = expectData(yield* call("POST", "configurations", { kind: "agent", values: {} }), 201)
        const harnessAuth = { method: "api_key", source: { kind: "secret", namespaceId: ns, id: secret.id } }
        const agent = expectData(yield* call("POST", "agents", { name: "bot", configurationId: configuration.id, harnessAuth }), 201)
        const url = `${baseUrl}/namespaces/${ns}/agents/${agent.id}/stop`
        // The platform's bounded read closed the connection at the limit, with no answer.
        expect(yield* Effect.promise(() => chunkedPost(url, keyed(admin.headers, "stop-chunked"), 2 * 448 * 1024))).toBe("202")
        // The body counted as none: a bodyless repeat under the key is the same request, replayed.
        const repeat = yield* send(baseUrl, "POST", `/namespaces/${ns}/agents/${agent.id}/stop`, keyed(admin.headers, "stop-chunked"))
        expect(repeat.status).toBe(202)
        expect(repeat.headers.get("idempotent-replayed")).toBe("true")
        expect(repeat.body.data.desiredRuntimeState).toBe("stopped")
      }))

    it.effect("expiry: an expired key is not replayed, and the worker's sweep deletes expired keys only", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdmin("idem-expiry@example.com")
        const ns = yield* seedNamespace("idem-expiry")
        const sql = yield* SqlClient.SqlClient
        const post = (key: string, name: string) =>
          send(baseUrl, "POST", `/namespaces/${ns}/presets`, keyed(admin.headers, key), { name, template: {} })
        expectData(yield* post("old", "old-1"), 201)
        expectData(yield* post("fresh", "fresh-1"), 201)
        expectData(yield* post("reused", "reused-1"), 201)
        yield* sql`UPDATE idempotency_keys SET expires_at = now() - interval '1 second' WHERE key IN ('old', 'reused')`
        // Past expiry, the key is free again before any sweep: the request acts.
        const reused = yield* post("reused", "reused-1b")
        expect(reused.headers.get("idempotent-replayed")).toBeNull()
        expect(expectData(reused, 201).name).toBe("reused-1b")

        const deleted = yield* sweepIdempotencyKeys.pipe(Effect.provide(IdempotencyKeysRepo.Default))
        expect(deleted).toBe(1)
        const left = yield* sql<{ key: string }>`SELECT key FROM idempotency_keys WHERE principal_id = ${admin.principalId} ORDER BY key`
        expect(left.map((r) => r.key)).toEqual(["fresh", "reused"])
        expect(yield* sweepIdempotencyKeys.pipe(Effect.provide(IdempotencyKeysRepo.Default))).toBe(0)
      }))

    it.effect("in flight: a repeat waits for the first request, is 409 if it never answers, and takes over an abandoned key", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdmin("idem-flight@example.com")
        const ns = yield* seedNamespace("idem-flight")
        const sql = yield* SqlClient.SqlClient
        const path = `/namespaces/${ns}/presets`
        const body = { name: "flight", template: {} }
        const first = expectData(yield* send(baseUrl, "POST", path, keyed(admin.headers, "flight"), body), 201)
        // A reservation with no answer yet, as a first request still running leaves it.
        yield* sql`UPDATE idempotency_keys SET status = NULL, response_body = NULL WHERE key = 'flight'`
        expectError(yield* send(baseUrl, "POST", path, keyed(admin.headers, "flight"), body), 409, "RESOURCE_CONFLICT", KEY_DETAIL)
        expect(yield* count("presets", "namespace_id", ns)).toBe(1)
        // Abandoned (in flight for longer than 5 minutes): the next request owns the key and acts.
        yield* sql`UPDATE idempotency_keys SET created_at = now() - interval '6 minutes' WHERE key = 'flight'`
        yield* sql`DELETE FROM presets WHERE id = ${first.id}`
        const retried = yield* send(baseUrl, "POST", path, keyed(admin.headers, "flight"), body)
        expect(expectData(retried, 201).id).not.toBe(first.id)
        expect((yield* keyRows("flight"))[0]!.status).toBe(201)
      }))
  })
})
