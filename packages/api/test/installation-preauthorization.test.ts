/**
 * GET /installation with its authorization and row in the credential statement (issue 11,
 * item 1): every answer is the one of the unfolded path. A bad credential is the same 401; a
 * denial the same 403 with the same audit record (its reason from `decide`); policy and
 * credentials are read from storage on every request, so a change shows on the next one.
 */
import { describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { Installation as InstallationBody } from "@svc/core/api"
import { BuiltinRoles } from "@svc/core/iam"
import { InstallationId } from "@svc/core/schema"
import { Effect, Schema } from "effect"
import { bindInstallationAdmin, bindRole } from "../../../testing/identity.js"
import { TestServer } from "../../../testing/server.js"
import {
  apiTestLayer,
  expectData,
  expectError,
  seedAdmin,
  seedHuman,
  seedNamespace,
  seedServiceKey,
  send,
  withKey,
  withSession
} from "./support/iamServer.js"
import { counted, untilListening } from "./support/statementCounter.js"

const email = (name: string) => `${name}-${crypto.randomUUID().slice(0, 8)}@example.test`

/** The `authorization.denied` records of a principal: their permission and reason. */
const denials = (principalId: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ resource_kind: string; resource_id: string; details: { permission: string; reason: string } }>`
      SELECT resource_kind, resource_id, details FROM audit_events
      WHERE kind = 'authorization.denied' AND actor_principal_id = ${principalId} ORDER BY id
    `
    return rows.map((row) => ({ resource: `${row.resource_kind}/${row.resource_id}`, ...row.details }))
  })

const denied = (reason: string) => ({ resource: "installation/installation", permission: "installation:read", reason })

/** 401 with the exact message of the unfolded path. */
const expectUnauthenticated = (result: Parameters<typeof expectError>[0], message: string) => {
  expectError(result, 401, "UNAUTHENTICATED")
  expect(result.body.error.message).toBe(message)
}

describe("GET /installation in one statement", () => {
  it.layer(apiTestLayer(), { timeout: 120_000 })((it) => {
    it.effect("before bootstrap it answers without an id; once the row exists, with its id", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const sql = yield* SqlClient.SqlClient
        const admin = yield* seedServiceKey("pre-bootstrap")
        yield* bindInstallationAdmin(admin.principalId)
        expect(yield* sql`SELECT id FROM installation`).toEqual([])
        yield* untilListening
        const before = yield* counted(send(baseUrl, "GET", "/installation", admin.headers))
        const unbootstrapped = expectData(before.result, 200)
        expect(Object.keys(unbootstrapped)).not.toContain("id")
        expect(unbootstrapped.capabilities).toEqual({ agentProvisioning: { executionModes: ["embedded"] } })
        expect(before.statements).toBe(1)
        const id = InstallationId.make()
        yield* sql`INSERT INTO installation (id, bootstrapped_at) VALUES (${id}, now())`
        const after = yield* counted(send(baseUrl, "GET", "/installation", admin.headers))
        const bootstrapped = expectData(after.result, 200)
        expect(bootstrapped.id).toBe(id)
        expect(bootstrapped.capabilities).toEqual(unbootstrapped.capabilities)
        // The body (its fixed part encoded once) is what the contract's schema gives, key order too.
        for (const data of [unbootstrapped, bootstrapped]) {
          const encoded = Schema.encodeSync(InstallationBody)(Schema.decodeUnknownSync(InstallationBody)(data))
          expect(data).toEqual(encoded)
          expect(Object.keys(data)).toEqual(Object.keys(encoded))
        }
        expect(after.result.body.meta).toEqual({ requestId: after.result.headers.get("x-request-id") })
        expect(after.statements).toBe(1)
      }))

    it.effect("an unknown, revoked or expired key, and a revoked session, are the same 401 as before", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const sql = yield* SqlClient.SqlClient
        const key = yield* seedServiceKey("pre-revoked")
        yield* bindInstallationAdmin(key.principalId)
        expectData(yield* send(baseUrl, "GET", "/installation", key.headers), 200)
        const keyMessage = "The service key is invalid, expired or revoked."
        expectUnauthenticated(yield* send(baseUrl, "GET", "/installation", withKey("svck_unknown")), keyMessage)
        yield* sql`UPDATE service_keys SET revoked_at = now() WHERE id = ${key.keyId}`
        expectUnauthenticated(yield* send(baseUrl, "GET", "/installation", key.headers), keyMessage)
        const expiring = yield* seedServiceKey("pre-expired")
        yield* bindInstallationAdmin(expiring.principalId)
        yield* sql`UPDATE service_keys SET expires_at = now() - interval '1 second' WHERE id = ${expiring.keyId}`
        expectUnauthenticated(yield* send(baseUrl, "GET", "/installation", expiring.headers), keyMessage)

        const human = yield* seedAdmin(email("pre-session"))
        expectData(yield* send(baseUrl, "GET", "/installation", human.headers), 200)
        yield* sql`UPDATE sessions SET revoked_at = now() WHERE account_id = ${human.userId}`
        expectUnauthenticated(yield* send(baseUrl, "GET", "/installation", human.headers), "The session is invalid, expired or revoked.")
        expectUnauthenticated(yield* send(baseUrl, "GET", "/installation", withSession("svcs_forged")), "The session is invalid, expired or revoked.")
        // No credential at all, and the refused Authorization header: unchanged.
        expectUnauthenticated(yield* send(baseUrl, "GET", "/installation", {}), "Authentication is required.")
        expectUnauthenticated(
          yield* send(baseUrl, "GET", "/installation", { ...human.headers, authorization: "Bearer x" }),
          "Authorization headers are not accepted; use a session or x-api-key."
        )
        expect(yield* denials(key.principalId)).toEqual([])
      }))

    it.effect("a key or a session without a grant is 403, audited with the reason decide gives (no-grant)", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const stranger = yield* seedServiceKey("pre-stranger")
        expectError(yield* send(baseUrl, "GET", "/installation", stranger.headers), 403, "FORBIDDEN")
        expect(yield* denials(stranger.principalId)).toEqual([denied("no-grant")])
        const human = yield* seedHuman(email("pre-human"))
        expectError(yield* send(baseUrl, "GET", "/installation", human.headers), 403, "FORBIDDEN")
        expect(yield* denials(human.principalId)).toEqual([denied("no-grant")])
        // A Namespace role does not reach the Installation.
        const ns = yield* seedNamespace(`pre-${crypto.randomUUID().slice(0, 8)}`)
        yield* bindRole(human.principalId, BuiltinRoles.namespaceAdmin.id, { kind: "namespace", id: ns })
        expectError(yield* send(baseUrl, "GET", "/installation", human.headers), 403, "FORBIDDEN")
        expect(yield* denials(human.principalId)).toEqual([denied("no-grant"), denied("no-grant")])
      }))

    it.effect("GET /backends: installation:read is not enough (403, audited as installation:administer no-grant)", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const sql = yield* SqlClient.SqlClient
        const role = `role_${crypto.randomUUID()}`
        yield* sql`INSERT INTO roles (id, namespace_id, name, permissions) VALUES (${role}, NULL, ${role}, ARRAY['installation:read'])`
        const viewer = yield* seedServiceKey("pre-backends-viewer")
        yield* bindRole(viewer.principalId, role, { kind: "installation" })
        expectData(yield* send(baseUrl, "GET", "/installation", viewer.headers), 200)
        expectError(yield* send(baseUrl, "GET", "/backends", viewer.headers), 403, "FORBIDDEN")
        expect(yield* denials(viewer.principalId)).toEqual([
          { resource: "installation/installation", permission: "installation:administer", reason: "no-grant" }
        ])
      }))

    it.effect("a Namespace-scoped key is 403 out of scope, even with an Installation binding", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const ns = yield* seedNamespace(`pre-${crypto.randomUUID().slice(0, 8)}`)
        const scoped = yield* seedServiceKey("pre-scoped", ns)
        yield* bindInstallationAdmin(scoped.principalId)
        expectError(yield* send(baseUrl, "GET", "/installation", scoped.headers), 403, "FORBIDDEN")
        expect(yield* denials(scoped.principalId)).toEqual([denied("out-of-scope")])
      }))

    it.effect("policy is read on every request: a Restriction, then its removal, then the binding's removal", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const sql = yield* SqlClient.SqlClient
        const human = yield* seedAdmin(email("pre-policy"))
        const key = yield* seedServiceKey("pre-policy")
        yield* bindInstallationAdmin(key.principalId)
        for (const caller of [{ principalId: human.principalId, headers: human.headers }, key]) {
          expectData(yield* send(baseUrl, "GET", "/installation", caller.headers), 200)
          const restriction = `rst_${crypto.randomUUID()}`
          yield* sql`
            INSERT INTO restrictions (id, principal_id, permission, resource_kind, resource_id)
            VALUES (${restriction}, ${caller.principalId}, '*', 'installation', 'installation')
          `
          expectError(yield* send(baseUrl, "GET", "/installation", caller.headers), 403, "FORBIDDEN")
          expect(yield* denials(caller.principalId)).toEqual([denied("restricted")])
          yield* sql`DELETE FROM restrictions WHERE id = ${restriction}`
          expectData(yield* send(baseUrl, "GET", "/installation", caller.headers), 200)
          yield* sql`DELETE FROM access_bindings WHERE principal_id = ${caller.principalId}`
          expectError(yield* send(baseUrl, "GET", "/installation", caller.headers), 403, "FORBIDDEN")
          expect(yield* denials(caller.principalId)).toEqual([denied("restricted"), denied("no-grant")])
        }
      }))
  })
})
