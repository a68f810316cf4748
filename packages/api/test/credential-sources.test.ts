/**
 * Credential sources over the real API, database and a loopback Credential Gateway speaking the
 * gateway's gRPC protocol (SPEC 2.10, 3, 4.6): the lifecycle, every admission rule in its order,
 * the state machine on refusals, slow and lost answers and restarts, the worker's sweep, and
 * the Namespace and Secret deletions a source blocks.
 */
import * as grpc from "@grpc/grpc-js"
import { afterAll, beforeEach, describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { CredentialSourcesRepo } from "@svc/core/db"
import { makeCredentialGatewayClient } from "@svc/core/drivers/credentialGateway"
import { sweepCredentialSources } from "@svc/worker"
import { Effect, Layer } from "effect"
import { startCredentialGateway } from "../../../testing/credentialGateway.js"
import { LogCapture, TestServer } from "../../../testing/server.js"
import { GATEWAY_TOKEN, gatewayConfiguration, gatewayInstallation, keyWithPermissions, sourceRows } from "./support/credentialGatewayWorld.js"
import { apiTestLayer, auditKinds, expectData, expectError, seedAdmin, seedNamespace, send, TIMESTAMP } from "./support/iamServer.js"

const gateway = await startCredentialGateway({ token: GATEWAY_TOKEN })
const installation = gatewayInstallation(gateway)
const sweeper = makeCredentialGatewayClient(gatewayConfiguration(installation))
const SECRET_VALUE = "sk-vendor-credential-0123456789"
const CS_ID = /^cs_[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

const world = (name: string) =>
  Effect.gen(function* () {
    const { baseUrl } = yield* TestServer
    const admin = yield* seedAdmin(`${name}@example.com`)
    const ns = yield* seedNamespace(name)
    const call = (method: string, path: string, body?: unknown, headers = admin.headers) => send(baseUrl, method, path, headers, body)
    const secret = expectData(yield* call("POST", `/namespaces/${ns}/secrets`, { name: `${name}-key`, value: SECRET_VALUE }), 201)
    const body = (extra: object = {}) => ({
      name: "vendor-key",
      type: "modelvendor",
      config: { base_url: "https://models.example.com" },
      secrets: { api_key: { kind: "secret", namespaceId: ns, id: secret.id } },
      ...extra
    })
    return { baseUrl, admin, ns, secret, call, body }
  })

const sweep = (registeringTimeoutMs = 3000) =>
  sweepCredentialSources(sweeper, registeringTimeoutMs).pipe(Effect.provide(CredentialSourcesRepo.Default))

describe("Credential sources", () => {
  beforeEach(() => gateway.reset())
  afterAll(async () => {
    sweeper.close()
    await gateway.stop()
  })

  it.layer(apiTestLayer(installation).pipe(Layer.provideMerge(LogCapture.layer)), { timeout: 120_000 })((it) => {
    it.effect("GET /installation and GET /backends show the sandbox_gateway Backend without calling the gateway", () =>
      Effect.gen(function* () {
        const { admin, call } = yield* world("cs-reflect")
        expect(expectData(yield* call("GET", "/backends"), 200)).toEqual([{ id: "sandboxes", type: "sandbox_gateway" }])
        const installationRead = expectData(yield* call("GET", "/installation"), 200)
        expect(installationRead.capabilities).toEqual({ agentProvisioning: { executionModes: ["embedded"] } })
        expect(JSON.stringify(installationRead)).not.toContain("127.0.0.1")
        expect(admin.headers).toBeDefined()
        expect(gateway.calls).toEqual([])
      }))

    it.effect("create registers with the gateway (201, ready, live status); list has no status and calls nothing; get probes; delete removes", () =>
      Effect.gen(function* () {
        const { ns, secret, call, body, admin } = yield* world("cs-life")
        const created = yield* call("POST", `/namespaces/${ns}/credential-sources`, body())
        const source = expectData(created, 201)
        const expected = {
          id: expect.stringMatching(CS_ID),
          namespaceId: ns,
          name: "vendor-key",
          type: "modelvendor",
          config: { base_url: "https://models.example.com" },
          secrets: { api_key: { kind: "secret", namespaceId: ns, id: secret.id } },
          ref: { kind: "credential_source", namespaceId: ns, id: source.id },
          state: "ready",
          createdAt: expect.stringMatching(TIMESTAMP)
        }
        expect(source).toEqual({ ...expected, status: { state: "ready" } })
        expect(created.text).not.toContain(SECRET_VALUE)
        expect(gateway.providers.get(source.id)).toEqual({
          name: source.id,
          type: "modelvendor",
          labels: { "svc.credential-source": source.id, "svc.namespace": ns },
          config: { base_url: "https://models.example.com" },
          credentials: { api_key: SECRET_VALUE }
        })

        gateway.calls.length = 0
        expect(expectData(yield* call("GET", `/namespaces/${ns}/credential-sources`), 200)).toEqual([expected])
        expect(gateway.calls).toEqual([])
        const read = yield* call("GET", `/namespaces/${ns}/credential-sources/${source.id}`)
        expect(expectData(read, 200)).toEqual({ ...expected, status: { state: "ready" } })
        expect(read.text).not.toContain(SECRET_VALUE)
        expect(gateway.calls).toEqual([{ method: "GetProvider", name: source.id }])

        // The gateway lost its copy: the read still succeeds and says so.
        gateway.providers.delete(source.id)
        expect(expectData(yield* call("GET", `/namespaces/${ns}/credential-sources/${source.id}`), 200).status).toEqual({ state: "absent" })
        gateway.providers.set(source.id, { name: source.id, type: "modelvendor", labels: {}, config: {}, credentials: {} })

        const deleted = yield* call("DELETE", `/namespaces/${ns}/credential-sources/${source.id}`)
        expect(deleted.status).toBe(204)
        expect(gateway.providers.has(source.id)).toBe(false)
        expectError(yield* call("GET", `/namespaces/${ns}/credential-sources/${source.id}`), 404, "NOT_FOUND")
        expectError(yield* call("DELETE", `/namespaces/${ns}/credential-sources/${source.id}`), 404, "NOT_FOUND")
        const audit = yield* auditKinds(source.id)
        expect(audit.map((row) => [row.kind, row.actor_principal_id])).toEqual([
          ["credential_source.created", admin.principalId],
          ["credential_source.deleted", admin.principalId]
        ])
        expect(JSON.stringify(audit)).not.toContain(SECRET_VALUE)
      }))

    it.effect("rejects malformed bodies, unknown fields and missing required fields before any Secret is read", () =>
      Effect.gen(function* () {
        const { ns, call, body } = yield* world("cs-input")
        const missingSecret = { kind: "secret", namespaceId: ns, id: "sec_00000000-0000-4000-8000-000000000000" }
        const path = `/namespaces/${ns}/credential-sources`
        expectError(yield* call("POST", path, { ...body(), extra: 1 }), 400, "INVALID_REQUEST", [{ code: "UNKNOWN_FIELD", path: "/extra" }])
        expectError(yield* call("POST", path, { type: "modelvendor" }), 400, "INVALID_REQUEST", [{ code: "REQUIRED", path: "/name" }])
        // SPEC 2.10, 8: 1-200 characters, no leading or trailing whitespace, no control characters.
        expectError(yield* call("POST", path, body({ name: "" })), 400, "INVALID_REQUEST", [{ code: "INVALID_VALUE", path: "/name" }])
        expectError(yield* call("POST", path, body({ name: "n".repeat(201) })), 400, "INVALID_REQUEST", [{ code: "TOO_LONG", path: "/name" }])
        expectError(yield* call("POST", path, body({ name: " vendor" })), 400, "INVALID_REQUEST", [{ code: "INVALID_FORMAT", path: "/name" }])
        expectError(yield* call("POST", path, body({ name: "ven\u0007dor" })), 400, "INVALID_REQUEST", [{ code: "INVALID_FORMAT", path: "/name" }])
        expectError(yield* call("POST", path, body({ type: "Model_Vendor" })), 400, "INVALID_REQUEST", [{ code: "INVALID_FORMAT", path: "/type" }])
        expectError(yield* call("POST", path, body({ config: { base_url: 5 } })), 400, "INVALID_REQUEST", [{ code: "INVALID_TYPE", path: "/config/base_url" }])
        // Stored as jsonb, which refuses an unpaired surrogate: refused here, not by the database.
        expectError(yield* call("POST", path, body({ config: { base_url: "https://models.example.com/\ud800" } })), 400, "INVALID_REQUEST", [
          { code: "INVALID_VALUE", path: "/config/base_url" }
        ])
        expectError(yield* call("POST", path, body({ secrets: { api_key: { ...missingSecret, value: SECRET_VALUE } } })), 400, "INVALID_REQUEST", [
          { code: "UNKNOWN_FIELD", path: "/secrets/api_key/value" }
        ])
        // Catalog fields: an unknown config or secrets field and the missing api_key, all at once,
        // although the Secret named does not exist (it is never read).
        expectError(
          yield* call("POST", path, body({ config: { region: "eu" }, secrets: { token: missingSecret } })),
          400,
          "INVALID_REQUEST",
          [{ code: "UNKNOWN_FIELD", path: "/config/region" }, { code: "UNKNOWN_FIELD", path: "/secrets/token" }, { code: "REQUIRED", path: "/secrets/api_key" }]
        )
        expectError(yield* call("POST", path, body({ type: "othervendor" })), 404, "NOT_FOUND")
        expectError(yield* call("POST", path, body({ secrets: { api_key: missingSecret } })), 404, "NOT_FOUND")
        const other = yield* seedNamespace("cs-input-other")
        expectError(yield* call("POST", path, body({ secrets: { api_key: { ...missingSecret, namespaceId: other } } })), 404, "NOT_FOUND")
        expect(yield* sourceRows).toEqual([])
        expect(gateway.calls).toEqual([])
      }))

    it.effect("a name of 200 characters is accepted: SPEC 8 counts characters, not UTF-16 code units", () =>
      Effect.gen(function* () {
        const { ns, call, body } = yield* world("cs-name-limit")
        const name = "\u{1F511}".repeat(200)
        const created = expectData(yield* call("POST", `/namespaces/${ns}/credential-sources`, body({ name })), 201)
        expect(created).toMatchObject({ name, state: "ready" })
        expect(expectData(yield* call("GET", `/namespaces/${ns}/credential-sources/${created.id}`), 200).name).toBe(name)
        // The other cases count every source row: this one goes.
        expect((yield* call("DELETE", `/namespaces/${ns}/credential-sources/${created.id}`)).status).toBe(204)
        expect(yield* sourceRows).toEqual([])
      }))

    it.effect("needs credential_source:create, secret:operate on each Secret, and a ready Namespace", () =>
      Effect.gen(function* () {
        const { ns, call, body } = yield* world("cs-authz")
        const path = `/namespaces/${ns}/credential-sources`
        const creatorOnly = yield* keyWithPermissions(ns, "cs-creator", ["credential_source:create", "namespace:read", "secret:read"])
        const operatorOnly = yield* keyWithPermissions(ns, "cs-operator", ["secret:operate", "secret:read", "namespace:read"])
        const both = yield* keyWithPermissions(ns, "cs-both", ["credential_source:create", "secret:operate", "namespace:read"])
        expectError(yield* call("POST", path, body(), creatorOnly.headers), 403, "FORBIDDEN")
        expectError(yield* call("POST", path, body(), operatorOnly.headers), 403, "FORBIDDEN")
        // A caller that may not even read the Namespace is not told it exists.
        const stranger = yield* keyWithPermissions(ns, "cs-stranger", ["secret:operate"])
        expectError(yield* call("POST", path, body(), stranger.headers), 404, "NOT_FOUND")
        expect(yield* sourceRows).toEqual([])
        const created = expectData(yield* call("POST", path, body(), both.headers), 201)
        // Listing needs namespace:read and shows only sources with an exact read.
        expect(expectData(yield* call("GET", path, undefined, both.headers), 200)).toEqual([])
        expectError(yield* call("GET", `${path}/${created.id}`, undefined, both.headers), 404, "NOT_FOUND")
        // Without a read the source is not shown to exist; with read but no delete, 403.
        expectError(yield* call("DELETE", `${path}/${created.id}`, undefined, both.headers), 404, "NOT_FOUND")
        const reader = yield* keyWithPermissions(ns, "cs-reader", ["credential_source:read"])
        expect(expectData(yield* call("GET", `${path}/${created.id}`, undefined, reader.headers), 200).status).toEqual({ state: "ready" })
        expectError(yield* call("DELETE", `${path}/${created.id}`, undefined, reader.headers), 403, "FORBIDDEN")
        expect((yield* call("DELETE", `${path}/${created.id}`)).status).toBe(204)

        // SPEC 4.6 "Namespace must be ready", 7.4 409 NAMESPACE_NOT_READY: every other status.
        gateway.calls.length = 0
        for (const status of ["provisioning", "failed", "deleting"]) {
          const other = yield* seedNamespace(`cs-authz-${status}`)
          const secret = expectData(yield* call("POST", `/namespaces/${other}/secrets`, { name: "k", value: SECRET_VALUE }), 201)
          yield* Effect.flatMap(SqlClient.SqlClient, (sql) => sql`UPDATE namespaces SET status = ${status} WHERE id = ${other}`)
          expectError(
            yield* call("POST", `/namespaces/${other}/credential-sources`, body({ secrets: { api_key: { kind: "secret", namespaceId: other, id: secret.id } } })),
            409,
            "NAMESPACE_NOT_READY"
          )
        }
        expect(yield* sourceRows).toEqual([])
        expect(gateway.calls).toEqual([])
      }))

    it.effect("a gateway refusal removes the source (503); no answer leaves it deleting for the sweep, which removes the late copy", () =>
      Effect.gen(function* () {
        const { ns, call, body } = yield* world("cs-machine")
        const path = `/namespaces/${ns}/credential-sources`
        for (const code of [grpc.status.PERMISSION_DENIED, grpc.status.RESOURCE_EXHAUSTED, grpc.status.INVALID_ARGUMENT]) {
          gateway.next("CreateProvider", { kind: "status", code })
          expectError(yield* call("POST", path, body()), 503, "DEPENDENCY_UNAVAILABLE")
        }
        expect(yield* sourceRows).toEqual([])

        // 5xx equivalent, a slow answer past requestTimeoutMs, a lost answer: each left deleting.
        gateway.next("CreateProvider", { kind: "status", code: grpc.status.INTERNAL }, { kind: "slow", ms: 1500 }, { kind: "lost" })
        for (let i = 0; i < 3; i++) expectError(yield* call("POST", path, body()), 503, "DEPENDENCY_UNAVAILABLE")
        const left = yield* sourceRows
        expect(left.map((row) => row.state)).toEqual(["deleting", "deleting", "deleting"])
        // The slow and the lost calls acted: their copies are at the gateway.
        expect([...gateway.providers.keys()].sort()).toEqual([left[1]!.id, left[2]!.id].sort())
        // A deleting source is listed with its state and counts for the Namespace.
        expect(expectData(yield* call("GET", path), 200).map((s: { state: string }) => s.state)).toEqual(["deleting", "deleting", "deleting"])
        expectError(yield* call("DELETE", `/namespaces/${ns}`), 409, "NAMESPACE_NOT_EMPTY")

        // The gateway is down: the sweep keeps them; a read still succeeds with a fixed reason.
        const read = expectData(yield* call("GET", `${path}/${left[2]!.id}`), 200)
        expect(read.status).toEqual({ state: "failed", reason: "The Credential Gateway did not answer." })
        expect(yield* sweep()).toBe(0)
        expect((yield* sourceRows).length).toBe(3)

        // After the restart the sweep removes the copies, then the records. The sweeper's channel
        // may still be in its reconnect backoff for the first call (a loaded host makes that
        // likely): like the worker's sweep every 30 s, the next pass finishes what one could not.
        yield* Effect.promise(() => gateway.restart())
        let removed = 0
        for (let pass = 0; pass < 10 && (yield* sourceRows).length > 0; pass++) {
          if (pass > 0) yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 300)))
          removed += yield* sweep()
        }
        expect(removed).toBe(3)
        expect(yield* sourceRows).toEqual([])
        expect(gateway.providers.size).toBe(0)
      }))

    it.effect("a registration an interrupted request left behind times out to deleting and never becomes ready", () =>
      Effect.gen(function* () {
        const { ns, call, body } = yield* world("cs-interrupted")
        const created = expectData(yield* call("POST", `/namespaces/${ns}/credential-sources`, body()), 201)
        const sql = yield* SqlClient.SqlClient
        yield* sql`UPDATE credential_sources SET state = 'registering', state_changed_at = now() - interval '1 hour' WHERE id = ${created.id}`
        expect(expectData(yield* call("GET", `/namespaces/${ns}/credential-sources/${created.id}`), 200).status).toEqual({ state: "pending" })
        // A fresh registration is left alone by the sweep.
        expect(yield* sweep(3_600_000 * 2)).toBe(0)
        expect((yield* sourceRows).map((r) => r.state)).toEqual(["registering"])
        expect(yield* sweep()).toBe(1)
        expect(yield* sourceRows).toEqual([])
        expect(gateway.providers.has(created.id)).toBe(false)
      }))

    it.effect("DELETE that the gateway does not confirm answers 503 and leaves the source deleting; Secrets and the Namespace stay blocked", () =>
      Effect.gen(function* () {
        const { ns, secret, call, body } = yield* world("cs-delete")
        const path = `/namespaces/${ns}/credential-sources`
        const created = expectData(yield* call("POST", path, body()), 201)
        expectError(yield* call("DELETE", `/namespaces/${ns}/secrets/${secret.id}`), 409, "RESOURCE_CONFLICT")
        expectError(yield* call("DELETE", `/namespaces/${ns}`), 409, "NAMESPACE_NOT_EMPTY")
        gateway.next("DeleteProvider", { kind: "status", code: grpc.status.UNAVAILABLE })
        expectError(yield* call("DELETE", `${path}/${created.id}`), 503, "DEPENDENCY_UNAVAILABLE")
        const read = expectData(yield* call("GET", `${path}/${created.id}`), 200)
        expect([read.state, read.status]).toEqual(["deleting", { state: "pending" }])
        expectError(yield* call("DELETE", `/namespaces/${ns}/secrets/${secret.id}`), 409, "RESOURCE_CONFLICT")
        expectError(yield* call("DELETE", `/namespaces/${ns}`), 409, "NAMESPACE_NOT_EMPTY")
        // Repeating DELETE finishes it.
        expect((yield* call("DELETE", `${path}/${created.id}`)).status).toBe(204)
        expect((yield* call("DELETE", `/namespaces/${ns}/secrets/${secret.id}`)).status).toBe(204)
        expect((yield* call("DELETE", `/namespaces/${ns}`)).status).toBe(202)
      }))

    it.effect("a repeated create with the same Idempotency-Key registers once and replays the first answer", () =>
      Effect.gen(function* () {
        const { ns, body, admin, baseUrl, call } = yield* world("cs-idempotent")
        const headers = { ...admin.headers, "idempotency-key": `cs-${crypto.randomUUID()}` }
        const first = yield* send(baseUrl, "POST", `/namespaces/${ns}/credential-sources`, headers, body())
        const again = yield* send(baseUrl, "POST", `/namespaces/${ns}/credential-sources`, headers, body())
        expect(expectData(again, 201)).toEqual(expectData(first, 201))
        expect(again.headers.get("idempotent-replayed")).toBe("true")
        expect((yield* sourceRows).length).toBe(1)
        expect(gateway.calls.filter((c) => c.method === "CreateProvider")).toHaveLength(1)
        expect((yield* call("DELETE", `/namespaces/${ns}/credential-sources/${expectData(first, 201).id}`)).status).toBe(204)
      }))

    // Runs last: scans what every test above left behind.
    it.effect("secrets scan: no log line, audit row, stored row or error carries a Secret value or the gateway token", () =>
      Effect.gen(function* () {
        const { ns, call, body } = yield* world("cs-scan")
        gateway.next("CreateProvider", { kind: "status", code: grpc.status.INTERNAL })
        const failed = yield* call("POST", `/namespaces/${ns}/credential-sources`, body())
        expectError(failed, 503, "DEPENDENCY_UNAVAILABLE")
        const [failedSource] = yield* sourceRows
        expect((yield* auditKinds(failedSource!.id)).map((row) => [row.kind, row.details])).toEqual([
          ["credential_source.created", { name: "vendor-key", type: "modelvendor", secretFields: ["api_key"] }],
          ["credential_source.registration_failed", { gateway: "noAnswer" }]
        ])
        expect(yield* sweep()).toBe(1)
        const logs = yield* LogCapture
        const sql = yield* SqlClient.SqlClient
        const stored = yield* sql<{ row: string }>`
          SELECT row_to_json(a)::text AS row FROM audit_events a
          UNION ALL SELECT row_to_json(c)::text FROM credential_sources c
          UNION ALL SELECT row_to_json(r)::text FROM credential_source_secret_refs r`
        const haystacks = [failed.text, ...logs.entries.map((e) => JSON.stringify(e)), ...stored.map((r) => r.row)]
        expect(logs.entries.length).toBeGreaterThan(0)
        for (const haystack of haystacks) {
          expect(haystack.includes(SECRET_VALUE) || haystack.includes(GATEWAY_TOKEN)).toBe(false)
        }
      }))
  })
})
