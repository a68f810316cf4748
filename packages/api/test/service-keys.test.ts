import { describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { SvcApi } from "@svc/api"
import { documentOf } from "../../../testing/openapiDoc.js"
import { BuiltinRoles, digestOf } from "@svc/core/iam"
import { Ajv2020 } from "ajv/dist/2020.js"
import { Effect } from "effect"
import { createRequire } from "node:module"
import { bindInstallationAdmin, bindRole, createServicePrincipal, insertServiceKey } from "../../../testing/identity.js"
import { call, LogCapture, REQUEST_ID, TestServer } from "../../../testing/server.js"
import {
  app,
  responses,
  exchanges,
  request,
  issue,
  revoke,
  expectError,
  UNKNOWN_KEY,
  identities,
  withoutIds,
  keyCount,
  failAudits,
  healAudits,
  headersFor
} from "./support/serviceKeys.js"

describe("service keys (SPEC 5.5)", () => {
  it.layer(app, { timeout: 60_000 })((it) => {
    it.effect("without credentials: 401, whatever the body", () =>
      Effect.gen(function* () {
        const { automation } = yield* identities
        expectError(yield* issue(undefined, { servicePrincipalId: automation, name: "ci" }), 401, "UNAUTHENTICATED")
        expectError(
          yield* request("/api/auth/service-keys", { method: "POST", body: "not json", contentType: "text/plain" }),
          401,
          "UNAUTHENTICATED"
        )
        expectError(yield* revoke(undefined, UNKNOWN_KEY), 401, "UNAUTHENTICATED")
        expectError(yield* issue({ apiKey: "svck_forged" }, { servicePrincipalId: automation, name: "ci" }), 401, "UNAUTHENTICATED")
      }))

    it.effect("an administrator issues a key: 201 once with the plaintext, only its digest stored, audited", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const { admin, adminCookie, automation } = yield* identities
        const before = Date.now()
        const result = yield* issue(adminCookie, { servicePrincipalId: automation, name: "ci" })
        expect(result.status, result.text).toBe(201)
        expect(result.body).toEqual({
          data: {
            id: expect.stringMatching(/^key_[0-9a-f-]{36}$/),
            servicePrincipalId: automation,
            name: "ci",
            expiresAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
            key: expect.stringMatching(/^svck_[A-Za-z0-9_-]{43}$/)
          },
          meta: { requestId: expect.stringMatching(REQUEST_ID) }
        })
        const { id, key, expiresAt } = result.body.data
        const lifetime = Date.parse(expiresAt) - before
        expect(lifetime).toBeGreaterThan(2_592_000_000 - 60_000)
        expect(lifetime).toBeLessThan(2_592_000_000 + 60_000)
        const rows = yield* sql<{ digest: Buffer; issued_by: string; namespace_id: string | null }>`
          SELECT digest, issued_by, namespace_id FROM service_keys WHERE id = ${id}
        `
        expect(rows).toHaveLength(1)
        expect(Buffer.compare(rows[0]!.digest, digestOf(key))).toBe(0)
        expect(rows[0]!.issued_by).toBe(admin.principalId)
        expect(rows[0]!.namespace_id).toBeNull()
        const audit = yield* sql<{ actor_principal_id: string; request_id: string; details: Record<string, unknown> }>`
          SELECT actor_principal_id, request_id, details FROM audit_events
          WHERE kind = 'service-key.issued' AND resource_id = ${id}
        `
        expect(audit).toHaveLength(1)
        expect(audit[0]!.actor_principal_id).toBe(admin.principalId)
        expect(audit[0]!.request_id).toBe(result.body.meta.requestId)
        expect(audit[0]!.details).toMatchObject({ servicePrincipalId: automation, name: "ci", credential: "session" })

        // The key works at once, on a protected endpoint, with its principal's grants.
        expectError(yield* revoke({ apiKey: key }, UNKNOWN_KEY), 404, "NOT_FOUND")
        // An Installation key may issue too (here for its own principal), and is audited as such.
        const second = yield* issue({ apiKey: key }, { servicePrincipalId: automation, name: "rotated", expiresIn: 86_400 })
        expect(second.status, second.text).toBe(201)
        expect(Date.parse(second.body.data.expiresAt) - Date.now()).toBeLessThanOrEqual(86_400_000)
        const [viaKey] = yield* sql<{ details: Record<string, unknown> }>`
          SELECT details FROM audit_events WHERE kind = 'service-key.issued' AND resource_id = ${second.body.data.id}
        `
        expect(viaKey!.details).toMatchObject({ credential: "service-key", credentialId: id })
      }))

    it.effect("Namespace principals need their exact namespaceId; Installation principals none", () =>
      Effect.gen(function* () {
        const { adminCookie, automation, ns, nsPrincipal, otherNs } = yield* identities
        const ok = yield* issue(adminCookie, { servicePrincipalId: nsPrincipal, namespaceId: ns, name: "deploy" })
        expect(ok.status, ok.text).toBe(201)
        expect(ok.body.data).toMatchObject({ servicePrincipalId: nsPrincipal, namespaceId: ns, name: "deploy" })
        expectError(yield* issue(adminCookie, { servicePrincipalId: nsPrincipal, name: "deploy" }), 400, "INVALID_REQUEST", [
          { code: "INVALID_VALUE", path: "/namespaceId" }
        ])
        expectError(
          yield* issue(adminCookie, { servicePrincipalId: nsPrincipal, namespaceId: otherNs, name: "deploy" }),
          400,
          "INVALID_REQUEST",
          [{ code: "INVALID_VALUE", path: "/namespaceId" }]
        )
        expectError(
          yield* issue(adminCookie, { servicePrincipalId: automation, namespaceId: ns, name: "deploy" }),
          400,
          "INVALID_REQUEST",
          [{ code: "INVALID_VALUE", path: "/namespaceId" }]
        )
      }))

    it.effect("unknown, Agent and human principals: 400", () =>
      Effect.gen(function* () {
        const { admin, adminCookie, agent, ns } = yield* identities
        const principalError = [{ code: "INVALID_VALUE", path: "/servicePrincipalId" }]
        expectError(yield* issue(adminCookie, { servicePrincipalId: "sp_nope", name: "x" }), 400, "INVALID_REQUEST", principalError)
        expectError(
          yield* issue(adminCookie, { servicePrincipalId: agent, namespaceId: ns, name: "x" }),
          400,
          "INVALID_REQUEST",
          principalError
        )
        expectError(yield* issue(adminCookie, { servicePrincipalId: admin.principalId, name: "x" }), 400, "INVALID_REQUEST", principalError)
      }))

    it.effect("403: a Namespace key, a caller without administer, a caller lacking the principal's grants", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const { automation, bare, narrowCookie, ns, nsKey, nsPrincipal, readerCookie } = yield* identities
        expectError(yield* issue(nsKey, { servicePrincipalId: nsPrincipal, namespaceId: ns, name: "x" }), 403, "FORBIDDEN")
        expectError(yield* revoke(nsKey, UNKNOWN_KEY), 403, "FORBIDDEN")
        expectError(yield* issue(readerCookie, { servicePrincipalId: bare, name: "x" }), 403, "FORBIDDEN")
        expectError(yield* revoke(readerCookie, UNKNOWN_KEY), 403, "FORBIDDEN")
        // Administer alone does not cover the installation-admin grants of `automation`, nor
        // the Namespace grants of a Namespace principal.
        expectError(yield* issue(narrowCookie, { servicePrincipalId: automation, name: "x" }), 403, "FORBIDDEN")
        expectError(
          yield* issue(narrowCookie, { servicePrincipalId: nsPrincipal, namespaceId: ns, name: "x" }),
          403,
          "FORBIDDEN"
        )
        // ...but a principal without grants is within its reach.
        const ok = yield* issue(narrowCookie, { servicePrincipalId: bare, name: "x" })
        expect(ok.status, ok.text).toBe(201)
        // Nor may it revoke a key of a principal it does not cover.
        const automationKey = yield* insertServiceKey(automation)
        expectError(yield* revoke(narrowCookie, automationKey.id), 403, "FORBIDDEN")
        const denials = yield* sql<{ count: number }>`
          SELECT count(*)::int AS count FROM audit_events WHERE kind = 'authorization.denied' AND outcome = 'denied'
        `
        expect(denials[0]!.count).toBeGreaterThanOrEqual(6)
      }))

    it.effect("invalid name, lifetime or fields: 400 with details", () =>
      Effect.gen(function* () {
        const { adminCookie, automation } = yield* identities
        const cases: ReadonlyArray<readonly [unknown, ReadonlyArray<{ code: string; path: string }>]> = [
          [{ servicePrincipalId: automation, name: "" }, [{ code: "INVALID_VALUE", path: "/name" }]],
          [{ servicePrincipalId: automation, name: "   " }, [{ code: "INVALID_VALUE", path: "/name" }]],
          [{ servicePrincipalId: automation, name: "x".repeat(33) }, [{ code: "TOO_LONG", path: "/name" }]],
          [{ servicePrincipalId: automation, name: 7 }, [{ code: "INVALID_TYPE", path: "/name" }]],
          // The audit record holds the name as jsonb, which refuses an unpaired surrogate.
          [{ servicePrincipalId: automation, name: "deploy \ud800" }, [{ code: "INVALID_VALUE", path: "/name" }]],
          [{ servicePrincipalId: automation }, [{ code: "REQUIRED", path: "/name" }]],
          [{ name: "x" }, [{ code: "REQUIRED", path: "/servicePrincipalId" }]],
          [{ servicePrincipalId: "", name: "x" }, [{ code: "INVALID_VALUE", path: "/servicePrincipalId" }]],
          [{ servicePrincipalId: "s".repeat(201), name: "x" }, [{ code: "TOO_LONG", path: "/servicePrincipalId" }]],
          [{ servicePrincipalId: automation, name: "x", expiresIn: 86_399 }, [{ code: "INVALID_VALUE", path: "/expiresIn" }]],
          [{ servicePrincipalId: automation, name: "x", expiresIn: 31_536_001 }, [{ code: "INVALID_VALUE", path: "/expiresIn" }]],
          [{ servicePrincipalId: automation, name: "x", expiresIn: 90_000.5 }, [{ code: "INVALID_VALUE", path: "/expiresIn" }]],
          [{ servicePrincipalId: automation, name: "x", expiresIn: "86400" }, [{ code: "INVALID_TYPE", path: "/expiresIn" }]],
          [{ servicePrincipalId: automation, name: "x", namespaceId: "team-a" }, [{ code: "INVALID_FORMAT", path: "/namespaceId" }]],
          [{ servicePrincipalId: automation, name: "x", scope: "all" }, [{ code: "UNKNOWN_FIELD", path: "/scope" }]],
          [{ servicePrincipalId: automation, name: "x", key: "svck_mine" }, [{ code: "UNKNOWN_FIELD", path: "/key" }]]
        ]
        for (const [body, details] of cases) {
          expectError(yield* issue(adminCookie, body), 400, "INVALID_REQUEST", details)
        }
        // Boundaries are accepted.
        for (const expiresIn of [86_400, 31_536_000]) {
          const ok = yield* issue(adminCookie, { servicePrincipalId: automation, name: "x".repeat(32), expiresIn })
          expect(ok.status, ok.text).toBe(201)
        }
        const unsupported = yield* request("/api/auth/service-keys", {
          method: "POST",
          credential: adminCookie,
          body: "{}",
          contentType: "text/plain"
        })
        expectError(unsupported, 415, "UNSUPPORTED_MEDIA_TYPE")
      }))

    it.effect("revocation: 200 once, then 401 on the next use and 404 on a second revocation; audited", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const { admin, adminCookie, automation } = yield* identities
        const issued = (yield* issue(adminCookie, { servicePrincipalId: automation, name: "short-lived" })).body.data
        expectError(yield* revoke({ apiKey: issued.key }, UNKNOWN_KEY), 404, "NOT_FOUND")
        const result = yield* revoke(adminCookie, issued.id)
        expect(result.status, result.text).toBe(200)
        expect(result.body).toEqual({ data: { id: issued.id, revoked: true }, meta: { requestId: expect.stringMatching(REQUEST_ID) } })
        expectError(yield* revoke({ apiKey: issued.key }, UNKNOWN_KEY), 401, "UNAUTHENTICATED")
        expectError(yield* revoke(adminCookie, issued.id), 404, "NOT_FOUND")
        expectError(yield* revoke(adminCookie, UNKNOWN_KEY), 404, "NOT_FOUND")
        expectError(yield* revoke(adminCookie, "k".repeat(200)), 404, "NOT_FOUND")
        expectError(yield* revoke(adminCookie, "k".repeat(201)), 400, "INVALID_REQUEST", [{ code: "TOO_LONG", path: "/keyId" }])
        const audit = yield* sql<{ actor_principal_id: string }>`
          SELECT actor_principal_id FROM audit_events WHERE kind = 'service-key.revoked' AND resource_id = ${issued.id}
        `
        expect(audit).toEqual([{ actor_principal_id: admin.principalId }])
      }))

    it.effect("revoking an issuer's key leaves the keys issued through it, and the principal's bindings", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const { adminCookie, automation } = yield* identities
        const issuer = (yield* issue(adminCookie, { servicePrincipalId: automation, name: "issuer" })).body.data
        const child = (yield* issue({ apiKey: issuer.key }, { servicePrincipalId: automation, name: "child" })).body.data
        expect((yield* revoke(adminCookie, issuer.id)).status).toBe(200)
        expectError(yield* revoke({ apiKey: issuer.key }, UNKNOWN_KEY), 401, "UNAUTHENTICATED")
        expectError(yield* revoke({ apiKey: child.key }, UNKNOWN_KEY), 404, "NOT_FOUND")
        const bindings = yield* sql`SELECT 1 FROM access_bindings WHERE principal_id = ${automation}`
        expect(bindings).toHaveLength(1)
      }))

    it.effect("a key never outlives its principal's grants: policy changes apply on the next request", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const { adminCookie } = yield* identities
        const temp = yield* createServicePrincipal("temporary")
        const binding = yield* bindInstallationAdmin(temp)
        const issued = (yield* issue(adminCookie, { servicePrincipalId: temp, name: "temp" })).body.data
        expectError(yield* revoke({ apiKey: issued.key }, UNKNOWN_KEY), 404, "NOT_FOUND")
        yield* sql`DELETE FROM access_bindings WHERE id = ${binding}`
        expectError(yield* revoke({ apiKey: issued.key }, UNKNOWN_KEY), 403, "FORBIDDEN")
      }))

    it.effect("a key whose principal changed scope since issuance is 403, never used with the new scope", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const { baseUrl } = yield* TestServer
        const { ns, otherNs } = yield* identities
        const secrets = (key: string) =>
          Effect.promise(() => call(`${baseUrl}/namespaces/${ns}/secrets`, { method: "GET", headers: { "x-api-key": key } }))
        const moved = yield* createServicePrincipal("moved", ns)
        yield* bindRole(moved, BuiltinRoles.namespaceAdmin.id, { kind: "namespace", id: ns })
        const namespaceKey = yield* insertServiceKey(moved, { namespaceId: ns })
        const narrowed = yield* createServicePrincipal("narrowed")
        yield* bindInstallationAdmin(narrowed)
        const installationKey = yield* insertServiceKey(narrowed)
        for (const { key } of [namespaceKey, installationKey]) expect((yield* secrets(key)).status).toBe(200)
        yield* sql`UPDATE principals SET namespace_id = ${otherNs} WHERE id = ${moved}`
        yield* sql`UPDATE principals SET namespace_id = ${ns} WHERE id = ${narrowed}`
        for (const { key } of [namespaceKey, installationKey]) {
          expectError(yield* secrets(key), 403, "FORBIDDEN")
          expectError(yield* revoke({ apiKey: key }, UNKNOWN_KEY), 403, "FORBIDDEN")
        }
      }))

    it.effect("no retrieval, list or update endpoint: 405 with Allow, and the plaintext is never shown again", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const { adminCookie, automation } = yield* identities
        const issued = (yield* issue(adminCookie, { servicePrincipalId: automation, name: "once" })).body.data
        const attempts = [
          ["GET", "/api/auth/service-keys", "POST"],
          ["GET", `/api/auth/service-keys/${issued.id}`, "DELETE"],
          ["PATCH", `/api/auth/service-keys/${issued.id}`, "DELETE"],
          ["PUT", `/api/auth/service-keys/${issued.id}`, "DELETE"]
        ] as const
        for (const [method, path, allow] of attempts) {
          const headers = { ...headersFor(adminCookie), "content-type": "application/json" }
          const body = method === "GET" ? {} : { body: JSON.stringify({ name: "renamed" }) }
          const result = yield* Effect.promise(() => call(`${baseUrl}${path}`, { method, headers, ...body }))
          expectError(result, 405, "METHOD_NOT_ALLOWED")
          expect(result.headers.get("allow"), `${method} ${path}`).toBe(allow)
          expect(result.text).not.toContain(issued.key)
        }
      }))

    it.effect("an expired key is 401", () =>
      Effect.gen(function* () {
        const { automation } = yield* identities
        const expired = yield* insertServiceKey(automation, { expiresAt: new Date(Date.now() - 1000) })
        expectError(yield* revoke({ apiKey: expired.key }, UNKNOWN_KEY), 401, "UNAUTHENTICATED")
        const revoked = yield* insertServiceKey(automation, { revoked: true })
        expectError(yield* revoke({ apiKey: revoked.key }, UNKNOWN_KEY), 401, "UNAUTHENTICATED")
      }))

    it.effect("a key stored for an Agent principal or a removed principal never authenticates (SPEC 5.1.3): 401", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const { agent, ns } = yield* identities
        const agentKey = yield* insertServiceKey(agent, { namespaceId: ns })
        expectError(yield* revoke({ apiKey: agentKey.key }, UNKNOWN_KEY), 401, "UNAUTHENTICATED")
        const removed = yield* createServicePrincipal("removed")
        yield* bindInstallationAdmin(removed)
        const removedKey = yield* insertServiceKey(removed)
        expectError(yield* revoke({ apiKey: removedKey.key }, UNKNOWN_KEY), 404, "NOT_FOUND")
        yield* sql`UPDATE principals SET deleted_at = now() WHERE id = ${removed}`
        expectError(yield* revoke({ apiKey: removedKey.key }, UNKNOWN_KEY), 401, "UNAUTHENTICATED")
      }))

    it.effect("a failed issuance audit: 503 without the key, and no key is left stored", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const { adminCookie, automation } = yield* identities
        yield* failAudits("service-key.issued")
        const before = yield* keyCount
        const result = yield* issue(adminCookie, { servicePrincipalId: automation, name: "unaudited" }).pipe(
          Effect.ensuring(healAudits)
        )
        expectError(result, 503, "DEPENDENCY_UNAVAILABLE")
        expect(yield* keyCount).toBe(before)
        const named = yield* sql`SELECT 1 FROM service_keys WHERE name = 'unaudited'`
        expect(named).toHaveLength(0)
      }))

    it.effect("a failed revocation audit: 503, and the key stays revoked", () =>
      Effect.gen(function* () {
        const { adminCookie, automation } = yield* identities
        const issued = (yield* issue(adminCookie, { servicePrincipalId: automation, name: "to-revoke" })).body.data
        yield* failAudits("service-key.revoked")
        const result = yield* revoke(adminCookie, issued.id).pipe(Effect.ensuring(healAudits))
        expectError(result, 503, "DEPENDENCY_UNAVAILABLE")
        expectError(yield* revoke({ apiKey: issued.key }, UNKNOWN_KEY), 401, "UNAUTHENTICATED")
        expectError(yield* revoke(adminCookie, issued.id), 404, "NOT_FOUND")
      }))

    it.effect("a plaintext key appears only in its issuance response: never in logs, audit or other responses", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const { entries } = yield* LogCapture
        const { adminCookie, automation } = yield* identities
        const issued = yield* issue(adminCookie, { servicePrincipalId: automation, name: "scan" })
        const key: string = issued.body.data.key
        // Use it, fail with it, revoke it, use it again.
        yield* revoke({ apiKey: key }, UNKNOWN_KEY)
        yield* issue({ apiKey: key }, { servicePrincipalId: "sp_nope", name: "x" })
        yield* revoke(adminCookie, issued.body.data.id)
        yield* revoke({ apiKey: key }, UNKNOWN_KEY)
        const containing = responses.filter((text) => text.includes(key))
        expect(containing).toEqual([issued.text])
        // No response of this file carries any key other than in an issuance's `data.key`.
        for (const text of responses) {
          const body = text.length > 0 ? JSON.parse(text) : {}
          const stripped = JSON.stringify({ ...body, data: body.data && { ...body.data, key: undefined } })
          expect(stripped).not.toMatch(/svck_[A-Za-z0-9_-]{20}/)
        }
        const logs = JSON.stringify(entries)
        expect(logs.length).toBeGreaterThan(0)
        expect(logs).not.toContain(key)
        expect(logs).not.toMatch(/svck_[A-Za-z0-9_-]{20}/)
        const audit = yield* sql<{ text: string }>`SELECT coalesce(string_agg(row_to_json(a)::text, ''), '') AS text FROM audit_events a`
        expect(audit[0]!.text).not.toMatch(/svck_/)
        const stored = yield* sql<{ text: string }>`SELECT string_agg(row_to_json(k)::text, '') AS text FROM service_keys k`
        expect(stored[0]!.text).not.toContain(key)
      }))

    it.effect("every response of this file matches the OpenAPI document", () =>
      Effect.sync(() => {
        const doc = documentOf(SvcApi)
        const ajv = new Ajv2020({ strict: false, allErrors: true })
        ;(createRequire(import.meta.url)("ajv-formats") as (ajv: Ajv2020) => void)(ajv)
        ajv.addSchema({ ...(withoutIds(doc) as object), $id: "openapi" })
        const statuses = new Set<string>()
        for (const { method, path, result } of exchanges) {
          const status = String(result.status)
          statuses.add(`${method} ${status}`)
          expect(doc.paths[path]?.[method]?.responses?.[status], `${method} ${path} documents ${status}`).toBeDefined()
          const pointer = ["paths", path, method, "responses", status, "content", "application/json", "schema"]
            .map((segment) => segment.replace(/~/g, "~0").replace(/\//g, "~1"))
            .join("/")
          const validate = ajv.compile({ $ref: `openapi#/${pointer}` })
          validate(result.body)
          expect(validate.errors ?? [], result.text).toEqual([])
        }
        for (const seen of ["post 201", "post 400", "post 401", "post 403", "post 415", "post 503", "delete 200", "delete 401", "delete 403", "delete 404", "delete 503"]) {
          expect(statuses).toContain(seen)
        }
      }))
  })
})

