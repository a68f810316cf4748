/**
 * Secrets over the real API and database (DESIGN §7): the lifecycle, every error path, IAM
 * visibility, and that the value never leaves the request: not in a response, a log line, an
 * audit row, or the stored row.
 */
import { describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { builtinSecretDriverLayer, SecretDriver } from "@svc/core/drivers/secret"
import { BuiltinRoles } from "@svc/core/iam"
import { NamespaceId, RoleId, SecretId } from "@svc/core/schema"
import { Effect, Layer, Redacted } from "effect"
import { randomBytes } from "node:crypto"
import { bindRole, createServicePrincipal, insertServiceKey } from "../../../testing/identity.js"
import { LogCapture, TestServer } from "../../../testing/server.js"
import {
  anonymous,
  apiTestLayer,
  expectData,
  expectError,
  type Result,
  seedAdmin,
  seedHuman,
  seedNamespace,
  send,
  TIMESTAMP,
  withKey
} from "./support/iamServer.js"

const SECRET_ID = /^sec_[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/
const KEY = Redacted.make(new Uint8Array(randomBytes(32)))

interface StoredRow {
  readonly driver: string
  readonly key_id: string
  readonly nonce: Uint8Array
  readonly ciphertext: Uint8Array
  readonly tag: Uint8Array
}

const stored = (id: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<StoredRow>`SELECT driver, key_id, nonce, ciphertext, tag FROM secrets WHERE id = ${id}`
    return rows[0]
  })

const revealed = (row: StoredRow) =>
  Effect.flatMap(SecretDriver, (driver) =>
    driver.reveal({ keyId: row.key_id, nonce: row.nonce, ciphertext: row.ciphertext, tag: row.tag }))
    .pipe(Effect.map(Redacted.value))

/** Every trace of the value this test run could have left: responses, logs, audit rows, stored rows. */
const expectNowhere = (values: ReadonlyArray<string>, responses: ReadonlyArray<Result>) =>
  Effect.gen(function* () {
    const logs = yield* LogCapture
    const sql = yield* SqlClient.SqlClient
    const audit = yield* sql<{ row: string }>`SELECT row_to_json(a)::text AS row FROM audit_events a`
    const rows = yield* sql<{ row: string }>`
      SELECT (to_jsonb(s) || jsonb_build_object('bytes', encode(s.ciphertext, 'escape')))::text AS row FROM secrets s
    `
    const haystacks = [
      ...responses.map((r) => r.text),
      ...logs.entries.map((entry) => JSON.stringify(entry)),
      ...audit.map((a) => a.row),
      ...rows.map((r) => r.row)
    ]
    expect(logs.entries.length).toBeGreaterThan(0)
    expect(audit.length).toBeGreaterThan(0)
    for (const value of values) {
      for (const haystack of haystacks) expect(haystack.includes(value), haystack.slice(0, 200)).toBe(false)
    }
  })

const testLayer = apiTestLayer().pipe(
  Layer.provideMerge(builtinSecretDriverLayer({ current: KEY })),
  Layer.provideMerge(LogCapture.layer)
)

describe("Secrets", () => {
  it.layer(testLayer, { timeout: 120_000 })((it) => {
    it.effect("create, read, list, replace and delete; the value is sealed, never returned, logged or audited", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdmin("secrets-admin@example.com")
        const ns = yield* seedNamespace("secrets-a")
        const first = "plaintext-ONE-7f3a9c-é-値"
        const second = "plaintext-TWO-91b2e4"
        const responses: Array<Result> = []
        const call = (method: string, path: string, body?: unknown) =>
          Effect.tap(send(baseUrl, method, path, admin.headers, body), (r) => Effect.sync(() => responses.push(r)))

        const created = expectData(yield* call("POST", `/namespaces/${ns}/secrets`, { name: "db-password", value: first }), 201)
        expect(created).toEqual({
          id: expect.stringMatching(SECRET_ID),
          namespaceId: ns,
          name: "db-password",
          ref: { kind: "secret", namespaceId: ns, id: created.id },
          createdAt: expect.stringMatching(TIMESTAMP),
          updatedAt: expect.stringMatching(TIMESTAMP)
        })
        const row1 = (yield* stored(created.id))!
        expect(row1.driver).toBe("builtin")
        expect(row1.key_id).toMatch(/^[0-9a-f]{16}$/)
        expect(Buffer.from(row1.ciphertext).includes(Buffer.from(first))).toBe(false)
        expect(yield* revealed(row1)).toBe(first)

        const path = `/namespaces/${ns}/secrets/${created.id}`
        expect(expectData(yield* call("GET", path), 200)).toEqual(created)
        expect(expectData(yield* call("GET", `/namespaces/${ns}/secrets`), 200)).toEqual([created])

        const updated = expectData(yield* call("PATCH", path, { value: second }), 200)
        expect(updated).toEqual({ ...created, updatedAt: expect.stringMatching(TIMESTAMP) })
        expect(Date.parse(updated.updatedAt)).toBeGreaterThanOrEqual(Date.parse(created.updatedAt))
        const row2 = (yield* stored(created.id))!
        expect(Buffer.from(row2.nonce).equals(Buffer.from(row1.nonce))).toBe(false)
        expect(yield* revealed(row2)).toBe(second)
        // Tampering with the stored ciphertext or tag is detected.
        const flipped = (b: Uint8Array) => Uint8Array.from(b, (x, i) => (i === 0 ? x ^ 1 : x))
        expect((yield* Effect.either(revealed({ ...row2, ciphertext: flipped(row2.ciphertext) })))._tag).toBe("Left")
        expect((yield* Effect.either(revealed({ ...row2, tag: flipped(row2.tag) })))._tag).toBe("Left")

        // The same value sealed twice: different nonces and ciphertexts.
        const twin = expectData(yield* call("POST", `/namespaces/${ns}/secrets`, { name: "twin", value: second }), 201)
        const row3 = (yield* stored(twin.id))!
        expect(Buffer.from(row3.nonce).equals(Buffer.from(row2.nonce))).toBe(false)
        expect(Buffer.from(row3.ciphertext).equals(Buffer.from(row2.ciphertext))).toBe(false)

        const removed = yield* call("DELETE", path)
        expect(removed.status).toBe(204)
        expect(removed.text).toBe("")
        expectError(yield* call("GET", path), 404, "NOT_FOUND")
        expectError(yield* call("PATCH", path, { value: first }), 404, "NOT_FOUND")
        expectError(yield* call("DELETE", path), 404, "NOT_FOUND")
        expect(yield* stored(created.id)).toBeUndefined()

        const sql = yield* SqlClient.SqlClient
        const audit = yield* sql<{ kind: string; actor_principal_id: string; namespace_id: string; details: unknown }>`
          SELECT kind, actor_principal_id, namespace_id, details FROM audit_events WHERE resource_id = ${created.id} ORDER BY id
        `
        expect(audit).toEqual([
          { kind: "secret.created", actor_principal_id: admin.principalId, namespace_id: ns, details: { name: "db-password", keyId: row1.key_id } },
          { kind: "secret.updated", actor_principal_id: admin.principalId, namespace_id: ns, details: { keyId: row2.key_id } },
          { kind: "secret.deleted", actor_principal_id: admin.principalId, namespace_id: ns, details: { name: "db-password" } }
        ])
        // Error paths with the value in the body do not echo it either.
        responses.push(yield* send(baseUrl, "POST", `/namespaces/${ns}/secrets`, admin.headers, { name: "twin", value: first }))
        responses.push(yield* send(baseUrl, "POST", `/namespaces/${ns}/secrets`, admin.headers, { name: " bad", value: `${first}\u0000` }))
        responses.push(yield* send(baseUrl, "POST", `/namespaces/${NamespaceId.make()}/secrets`, admin.headers, { name: "x", value: first }))
        expect(responses.slice(-3).map((r) => r.status)).toEqual([409, 400, 404])
        yield* expectNowhere([first, second, "plaintext-ONE", "plaintext-TWO"], responses)
      }))

    it.effect("bad bodies and ids are 400 INVALID_REQUEST; duplicates 409; absent or deleted Namespaces 404", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdmin("secrets-errors@example.com")
        const ns = yield* seedNamespace("secrets-errors")
        const other = yield* seedNamespace("secrets-errors-other")
        const post = (body: unknown, namespaceId: string = ns) => send(baseUrl, "POST", `/namespaces/${namespaceId}/secrets`, admin.headers, body)
        expectError(yield* post({}), 400, "INVALID_REQUEST", [
          { code: "REQUIRED", path: "/name" },
          { code: "REQUIRED", path: "/value" }
        ])
        expectError(yield* post({ name: "a", value: "" }), 400, "INVALID_REQUEST", [{ code: "INVALID_VALUE", path: "/value" }])
        expectError(yield* post({ name: "a", value: "a\u0000b" }), 400, "INVALID_REQUEST", [{ code: "INVALID_FORMAT", path: "/value" }])
        expectError(yield* post({ name: "a", value: "\ud800" }), 400, "INVALID_REQUEST", [{ code: "INVALID_FORMAT", path: "/value" }])
        expectError(yield* post({ name: "a", value: "x".repeat(65537) }), 400, "INVALID_REQUEST", [{ code: "TOO_LONG", path: "/value" }])
        // 65536 bytes is the limit in UTF-8 bytes, not characters.
        expectError(yield* post({ name: "a", value: "é".repeat(32769) }), 400, "INVALID_REQUEST", [{ code: "TOO_LONG", path: "/value" }])
        expectError(yield* post({ name: "x".repeat(201), value: "v" }), 400, "INVALID_REQUEST", [{ code: "TOO_LONG", path: "/name" }])
        expectError(yield* post({ name: "a", value: 5 }), 400, "INVALID_REQUEST")
        expectError(yield* post({ name: "a", value: "v", extra: true }), 400, "INVALID_REQUEST")
        expect(expectData(yield* post({ name: "max", value: "é".repeat(32768) }), 201).name).toBe("max")
        expect(expectData(yield* post({ name: "shared", value: "v" }), 201).name).toBe("shared")
        expectError(yield* post({ name: "shared", value: "w" }), 409, "RESOURCE_CONFLICT")
        expect(expectData(yield* post({ name: "shared", value: "v" }, other), 201).namespaceId).toBe(other)

        const absent = NamespaceId.make()
        expectError(yield* post({ name: "a", value: "v" }, absent), 404, "NOT_FOUND")
        expectError(yield* send(baseUrl, "GET", `/namespaces/${absent}/secrets`, admin.headers), 404, "NOT_FOUND")
        expectError(yield* send(baseUrl, "GET", `/namespaces/${absent}/secrets/${SecretId.make()}`, admin.headers), 404, "NOT_FOUND")
        const deleted = yield* seedNamespace("secrets-errors-deleted")
        const sql = yield* SqlClient.SqlClient
        const kept = expectData(yield* post({ name: "kept", value: "v" }, deleted), 201)
        yield* sql`UPDATE namespaces SET status = 'deleted' WHERE id = ${deleted}`
        expectError(yield* post({ name: "b", value: "v" }, deleted), 404, "NOT_FOUND")
        expectError(yield* send(baseUrl, "GET", `/namespaces/${deleted}/secrets`, admin.headers), 404, "NOT_FOUND")
        expectError(yield* send(baseUrl, "GET", `/namespaces/${deleted}/secrets/${kept.id}`, admin.headers), 404, "NOT_FOUND")
        expectError(yield* send(baseUrl, "PATCH", `/namespaces/${deleted}/secrets/${kept.id}`, admin.headers, { value: "w" }), 404, "NOT_FOUND")
        expectError(yield* send(baseUrl, "DELETE", `/namespaces/${deleted}/secrets/${kept.id}`, admin.headers), 404, "NOT_FOUND")

        expectError(yield* send(baseUrl, "GET", `/namespaces/${ns}/secrets/not-a-secret`, admin.headers), 400, "INVALID_REQUEST")
        expectError(yield* send(baseUrl, "GET", `/namespaces/${ns}/secrets/${SecretId.make()}`, admin.headers), 404, "NOT_FOUND")
        const inOther = expectData(yield* post({ name: "elsewhere", value: "v" }, other), 201)
        // A Secret is addressed through its own Namespace only.
        expectError(yield* send(baseUrl, "GET", `/namespaces/${ns}/secrets/${inOther.id}`, admin.headers), 404, "NOT_FOUND")
        expectError(yield* send(baseUrl, "PATCH", `/namespaces/${ns}/secrets/${inOther.id}`, admin.headers, { value: "w" }), 404, "NOT_FOUND")
        expectError(yield* send(baseUrl, "DELETE", `/namespaces/${ns}/secrets/${inOther.id}`, admin.headers), 404, "NOT_FOUND")
        expectError(yield* send(baseUrl, "PATCH", `/namespaces/${ns}/secrets/${inOther.id}`, admin.headers, {}), 400, "INVALID_REQUEST", [
          { code: "REQUIRED", path: "/value" }
        ])
        expectError(yield* send(baseUrl, "GET", `/namespaces/${ns}/secrets`, anonymous), 401, "UNAUTHENTICATED")
      }))

    it.effect("IAM: other Namespaces' callers get 403 or 404; the list shows exactly the Secrets the caller may read", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdmin("secrets-iam@example.com")
        const human = yield* seedHuman("secrets-iam-human@example.com")
        const ns = yield* seedNamespace("secrets-iam")
        const other = yield* seedNamespace("secrets-iam-other")
        const a = expectData(yield* send(baseUrl, "POST", `/namespaces/${ns}/secrets`, admin.headers, { name: "a", value: "va" }), 201)
        const b = expectData(yield* send(baseUrl, "POST", `/namespaces/${ns}/secrets`, admin.headers, { name: "b", value: "vb" }), 201)

        // The administrator of the other Namespace: 403 here, for every operation.
        const foreign = yield* createServicePrincipal("secrets-foreign", other)
        yield* bindRole(foreign, BuiltinRoles.namespaceAdmin.id, { kind: "namespace", id: other })
        const foreignKey = withKey((yield* insertServiceKey(foreign, { namespaceId: other })).key)
        expectError(yield* send(baseUrl, "POST", `/namespaces/${ns}/secrets`, foreignKey, { name: "c", value: "v" }), 403, "FORBIDDEN")
        expectError(yield* send(baseUrl, "GET", `/namespaces/${ns}/secrets`, foreignKey), 403, "FORBIDDEN")
        expectError(yield* send(baseUrl, "GET", `/namespaces/${ns}/secrets/${a.id}`, foreignKey), 403, "FORBIDDEN")
        expectError(yield* send(baseUrl, "DELETE", `/namespaces/${ns}/secrets/${a.id}`, foreignKey), 403, "FORBIDDEN")
        // ...and it manages its own Namespace's Secrets.
        expect(expectData(yield* send(baseUrl, "POST", `/namespaces/${other}/secrets`, foreignKey, { name: "c", value: "v" }), 201).name).toBe("c")

        // A human without grants cannot see the Namespace: 404.
        expectError(yield* send(baseUrl, "GET", `/namespaces/${ns}/secrets`, human.headers), 404, "NOT_FOUND")
        expectError(yield* send(baseUrl, "GET", `/namespaces/${ns}/secrets/${a.id}`, human.headers), 404, "NOT_FOUND")
        expectError(yield* send(baseUrl, "PATCH", `/namespaces/${ns}/secrets/${a.id}`, human.headers, { value: "w" }), 404, "NOT_FOUND")

        // namespace:read on the Namespace and secret:read on Secret a only: the list shows a.
        const sql = yield* SqlClient.SqlClient
        const nsReader = RoleId.make()
        const secretReader = RoleId.make()
        yield* sql`INSERT INTO roles (id, namespace_id, name, permissions) VALUES (${nsReader}, ${ns}, 'ns-reader', ARRAY['namespace:read'])`
        yield* sql`INSERT INTO roles (id, namespace_id, name, permissions) VALUES (${secretReader}, ${ns}, 'secret-reader', ARRAY['secret:read'])`
        const reader = yield* createServicePrincipal("secrets-reader", ns)
        yield* bindRole(reader, nsReader, { kind: "namespace", id: ns })
        yield* bindRole(reader, secretReader, { kind: "secret", id: a.id, namespaceId: ns })
        const readerKey = withKey((yield* insertServiceKey(reader, { namespaceId: ns })).key)
        expect(expectData(yield* send(baseUrl, "GET", `/namespaces/${ns}/secrets`, readerKey), 200)).toEqual([a])
        expect(expectData(yield* send(baseUrl, "GET", `/namespaces/${ns}/secrets/${a.id}`, readerKey), 200)).toEqual(a)
        // Without read on Secret b it is not visible at all.
        expectError(yield* send(baseUrl, "GET", `/namespaces/${ns}/secrets/${b.id}`, readerKey), 404, "NOT_FOUND")
        expectError(yield* send(baseUrl, "PATCH", `/namespaces/${ns}/secrets/${a.id}`, readerKey, { value: "w" }), 403, "FORBIDDEN")
        expectError(yield* send(baseUrl, "DELETE", `/namespaces/${ns}/secrets/${a.id}`, readerKey), 403, "FORBIDDEN")
        // The Namespace viewer reads every Secret's metadata; pagination is by id.
        const viewer = yield* createServicePrincipal("secrets-viewer", ns)
        yield* bindRole(viewer, BuiltinRoles.namespaceViewer.id, { kind: "namespace", id: ns })
        const viewerKey = withKey((yield* insertServiceKey(viewer, { namespaceId: ns })).key)
        const sorted = [a, b].sort((x, y) => (x.id < y.id ? -1 : 1))
        expect(expectData(yield* send(baseUrl, "GET", `/namespaces/${ns}/secrets`, viewerKey), 200)).toEqual(sorted)
        expect(expectData(yield* send(baseUrl, "GET", `/namespaces/${ns}/secrets?limit=1`, viewerKey), 200)).toEqual([sorted[0]])
        expect(expectData(yield* send(baseUrl, "GET", `/namespaces/${ns}/secrets?after=${sorted[0]!.id}`, viewerKey), 200)).toEqual([sorted[1]])

        // A binding may name a Secret; one that does not exist is 404.
        const target = yield* createServicePrincipal("secrets-target", ns)
        const bind = (id: string) =>
          send(baseUrl, "POST", `/namespaces/${ns}/iam/access-bindings`, admin.headers, {
            principalId: target,
            roleId: BuiltinRoles.namespaceViewer.id,
            resource: { kind: "secret", id }
          })
        expect((yield* bind(a.id)).status).toBe(201)
        expectError(yield* bind(SecretId.make()), 404, "NOT_FOUND")
      }))
  })
})
