/**
 * The audit API (DESIGN §18) over the real API and database: who may read which entries, keyset
 * paging with exact order and no duplicates, every filter, every bad input (400 with details,
 * never 500), and that no entry carries a secret value.
 */
import { describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { BuiltinRoles } from "@svc/core/iam"
import { RoleId } from "@svc/core/schema"
import { Effect } from "effect"
import { bindRole, createServicePrincipal, insertServiceKey, PASSWORD } from "../../../testing/identity.js"
import { TestServer } from "../../../testing/server.js"
import {
  anonymous,
  apiTestLayer,
  expectData,
  expectError,
  type Headers,
  type Result,
  seedAdmin,
  seedHuman,
  seedNamespace,
  send,
  TIMESTAMP,
  withKey
} from "./support/iamServer.js"

/** Seven entries in one Namespace, two sharing an instant (the id breaks the tie). */
const seedEntries = (ns: string, actor: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const at = (minute: number) => new Date(Date.UTC(2030, 0, 1, 0, minute))
    const specs = [
      { minute: 1, kind: "probe.created", outcome: "success", resource: "r1" },
      { minute: 2, kind: "probe.updated", outcome: "success", resource: "r1" },
      { minute: 2, kind: "probe.updated", outcome: "failure", resource: "r2" },
      { minute: 3, kind: "probe.deleted", outcome: "denied", resource: "r2" },
      { minute: 4, kind: "probe.created", outcome: "success", resource: "r3" },
      { minute: 5, kind: "probe.created", outcome: "success", resource: "r4" },
      { minute: 6, kind: "probe.deleted", outcome: "success", resource: "r4" }
    ]
    const ids: Array<string> = []
    for (const [i, spec] of specs.entries()) {
      const rows = yield* sql<{ id: string }>`
        INSERT INTO audit_events (at, kind, outcome, actor_principal_id, namespace_id, resource_kind, resource_id, details)
        VALUES (${at(spec.minute)}, ${spec.kind}, ${spec.outcome}, ${i === 3 ? "sp_other" : actor}, ${ns}, 'probe', ${`${ns}-${spec.resource}`},
          ${JSON.stringify({ step: i })}::jsonb)
        RETURNING id::text AS id
      `
      ids.push(rows[0]!.id)
    }
    return { ids, at }
  })

const query = (params: Record<string, string>) => {
  const search = new URLSearchParams(params).toString()
  return search.length === 0 ? "" : `?${search}`
}

describe("Audit API", () => {
  it.layer(apiTestLayer(), { timeout: 120_000 })((it) => {
    it.effect("authorization: anonymous 401, no grant 403/404, viewer 403, Namespace administrator its own Namespace only, Installation administrator all", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const sql = yield* SqlClient.SqlClient
        const admin = yield* seedAdmin("audit-authz-admin@example.com")
        const nsA = yield* seedNamespace("audit-authz-a")
        const nsB = yield* seedNamespace("audit-authz-b")
        yield* seedEntries(nsA, admin.principalId)
        yield* seedEntries(nsB, admin.principalId)
        const get = (path: string, headers: Headers) => send(baseUrl, "GET", path, headers)

        expectError(yield* get("/audit", anonymous), 401, "UNAUTHENTICATED")
        expectError(yield* get(`/namespaces/${nsA}/audit`, anonymous), 401, "UNAUTHENTICATED")

        const nobody = yield* seedHuman("audit-authz-nobody@example.com")
        expectError(yield* get("/audit", nobody.headers), 403, "FORBIDDEN")
        // A Namespace the caller cannot read is not revealed (SPEC 5.9).
        expectError(yield* get(`/namespaces/${nsA}/audit`, nobody.headers), 404, "NOT_FOUND")

        const viewer = yield* seedHuman("audit-authz-viewer@example.com")
        yield* bindRole(viewer.principalId, BuiltinRoles.namespaceViewer.id, { kind: "namespace", id: nsA })
        expectError(yield* get(`/namespaces/${nsA}/audit`, viewer.headers), 403, "FORBIDDEN")
        expectError(yield* get("/audit", viewer.headers), 403, "FORBIDDEN")

        const role = RoleId.make()
        yield* sql`INSERT INTO roles (id, namespace_id, name, permissions) VALUES (${role}, ${nsA}, 'auditor', ARRAY['namespace:read', 'namespace:administer'])`
        const nsAdmin = yield* createServicePrincipal("audit-ns-admin", nsA)
        yield* bindRole(nsAdmin, role, { kind: "namespace", id: nsA })
        const nsAdminHeaders = withKey((yield* insertServiceKey(nsAdmin, { namespaceId: nsA })).key)
        const own = expectData(yield* get(`/namespaces/${nsA}/audit?limit=200`, nsAdminHeaders), 200)
        expect(own.length).toBeGreaterThan(0)
        expect(own.every((entry: { namespaceId: string }) => entry.namespaceId === nsA)).toBe(true)
        expectError(yield* get(`/namespaces/${nsB}/audit`, nsAdminHeaders), 403, "FORBIDDEN")
        expectError(yield* get("/audit", nsAdminHeaders), 403, "FORBIDDEN")

        const all = expectData(yield* get(`/audit${query({ limit: "200", resourceKind: "probe" })}`, admin.headers), 200)
        expect(new Set(all.map((entry: { namespaceId: string }) => entry.namespaceId))).toEqual(new Set([nsA, nsB]))
        const onlyB = expectData(yield* get(`/namespaces/${nsB}/audit?limit=200`, admin.headers), 200)
        expect(onlyB.every((entry: { namespaceId: string }) => entry.namespaceId === nsB)).toBe(true)
        // The seven entries of B, and the denial of A's administrator reaching for B's trail.
        expect(onlyB.filter((entry: { kind: string }) => entry.kind.startsWith("probe."))).toHaveLength(7)
        expect(onlyB.filter((entry: { kind: string }) => !entry.kind.startsWith("probe."))).toEqual([
          expect.objectContaining({ kind: "authorization.denied", actor: nsAdmin, outcome: "denied", resource: { kind: "namespace", id: nsB } })
        ])
      }))

    it.effect("paging: exact (at, id) order across pages, no duplicates, nextCursor null on the last page; entry shape", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdmin("audit-paging@example.com")
        const ns = yield* seedNamespace("audit-paging")
        const { ids } = yield* seedEntries(ns, admin.principalId)
        const pages: Array<Array<{ id: string }>> = []
        let cursor: string | null = null
        do {
          const result: Result = yield* send(baseUrl, "GET", `/namespaces/${ns}/audit${query(cursor === null ? { limit: "3" } : { limit: "3", cursor })}`, admin.headers)
          pages.push(expectData(result, 200))
          cursor = result.body.meta.nextCursor
          expect(Object.keys(result.body.meta).sort()).toEqual(["nextCursor", "requestId"])
        } while (cursor !== null)
        expect(pages.map((page) => page.length)).toEqual([3, 3, 1])
        expect(pages.flat().map((entry) => entry.id)).toEqual(ids)

        const [first] = expectData(yield* send(baseUrl, "GET", `/namespaces/${ns}/audit?limit=1`, admin.headers), 200)
        expect(first).toEqual({
          id: ids[0],
          kind: "probe.created",
          at: "2030-01-01T00:01:00.000Z",
          actor: admin.principalId,
          outcome: "success",
          namespaceId: ns,
          resource: { kind: "probe", id: `${ns}-r1` },
          requestId: null,
          details: { step: 0 }
        })
        // A full last page still says there is nothing after it.
        const exact = yield* send(baseUrl, "GET", `/namespaces/${ns}/audit?limit=7`, admin.headers)
        expect(expectData(exact, 200)).toHaveLength(7)
        expect(exact.body.meta.nextCursor).toBeNull()
        // Default page size is 50.
        expect(expectData(yield* send(baseUrl, "GET", `/namespaces/${ns}/audit`, admin.headers), 200)).toHaveLength(7)
      }))

    it.effect("filters: since, until (any RFC 3339 offset), actor, kind, resourceKind, resourceId, outcome", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdmin("audit-filters@example.com")
        const ns = yield* seedNamespace("audit-filters")
        const { ids } = yield* seedEntries(ns, admin.principalId)
        const list = (params: Record<string, string>) =>
          Effect.map(send(baseUrl, "GET", `/namespaces/${ns}/audit${query(params)}`, admin.headers), (result) =>
            expectData(result, 200).map((entry: { id: string }) => entry.id))
        const pick = (...indexes: Array<number>) => indexes.map((i) => ids[i])

        expect(yield* list({ since: "2030-01-01T00:02:00Z" })).toEqual(pick(1, 2, 3, 4, 5, 6))
        expect(yield* list({ until: "2030-01-01T00:02:00.000Z" })).toEqual(pick(0))
        expect(yield* list({ since: "2030-01-01T02:02:00+02:00", until: "2030-01-01T00:04:00Z" })).toEqual(pick(1, 2, 3))
        expect(yield* list({ actor: "sp_other" })).toEqual(pick(3))
        expect(yield* list({ actor: admin.principalId, kind: "probe.deleted" })).toEqual(pick(6))
        expect(yield* list({ kind: "probe.created" })).toEqual(pick(0, 4, 5))
        expect(yield* list({ resourceKind: "probe" })).toEqual(pick(0, 1, 2, 3, 4, 5, 6))
        expect(yield* list({ resourceKind: "secret" })).toEqual([])
        expect(yield* list({ resourceId: `${ns}-r2` })).toEqual(pick(2, 3))
        expect(yield* list({ outcome: "failure" })).toEqual(pick(2))
        expect(yield* list({ outcome: "denied" })).toEqual(pick(3))
        // Filters and the cursor combine: the second page of `created` entries.
        const firstPage = yield* send(baseUrl, "GET", `/namespaces/${ns}/audit${query({ kind: "probe.created", limit: "2" })}`, admin.headers)
        expect(expectData(firstPage, 200).map((e: { id: string }) => e.id)).toEqual(pick(0, 4))
        expect(yield* list({ kind: "probe.created", limit: "2", cursor: firstPage.body.meta.nextCursor })).toEqual(pick(5))
      }))

    it.effect("bad inputs are 400 INVALID_REQUEST with details, never 500, on both routes", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdmin("audit-bad@example.com")
        const ns = yield* seedNamespace("audit-bad")
        const cursorOf = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url")
        const garbage = cursorOf({ at: "yesterday", id: "1" })
        const cases: Array<[Record<string, string>, ReadonlyArray<{ code: string; path: string }>]> = [
          [{ limit: "0" }, [{ code: "INVALID_VALUE", path: "/limit" }]],
          [{ limit: "201" }, [{ code: "INVALID_VALUE", path: "/limit" }]],
          [{ limit: "abc" }, [{ code: "INVALID_VALUE", path: "/limit" }]],
          [{ limit: "1.5" }, [{ code: "INVALID_VALUE", path: "/limit" }]],
          [{ cursor: "not a cursor!" }, [{ code: "INVALID_FORMAT", path: "/cursor" }]],
          [{ cursor: "abc" }, [{ code: "INVALID_VALUE", path: "/cursor" }]],
          [{ cursor: garbage }, [{ code: "INVALID_VALUE", path: "/cursor" }]],
          [{ cursor: cursorOf({ at: "2030-02-30T00:00:00.000000Z", id: "1" }) }, [{ code: "INVALID_VALUE", path: "/cursor" }]],
          [{ cursor: cursorOf({ at: "0000-01-01T00:00:00.000000Z", id: "1" }) }, [{ code: "INVALID_VALUE", path: "/cursor" }]],
          [{ cursor: cursorOf({ at: "2030-01-01T00:00:00.000000Z", id: "0" }) }, [{ code: "INVALID_VALUE", path: "/cursor" }]],
          [{ cursor: cursorOf({ at: "2030-01-01T00:00:00.000000Z", id: "1".repeat(19) }) }, [{ code: "INVALID_VALUE", path: "/cursor" }]],
          [{ cursor: cursorOf(["2030-01-01T00:00:00.000000Z", "1"]) }, [{ code: "INVALID_VALUE", path: "/cursor" }]],
          [{ since: "2030-02-30T00:00:00Z" }, [{ code: "INVALID_VALUE", path: "/since" }]],
          [{ since: "2030-01-01T24:00:00Z" }, [{ code: "INVALID_VALUE", path: "/since" }]],
          [{ since: "0000-01-01T00:00:00Z" }, [{ code: "INVALID_VALUE", path: "/since" }]],
          [{ until: "2030-01-01T00:00:00+24:00" }, [{ code: "INVALID_VALUE", path: "/until" }]],
          [{ since: "yesterday" }, [{ code: "INVALID_FORMAT", path: "/since" }]],
          [{ until: "2030-13-01T00:00:00Z" }, [{ code: "INVALID_VALUE", path: "/until" }]],
          [{ since: "2030-01-02T00:00:00Z", until: "2030-01-01T00:00:00Z" }, [{ code: "INVALID_VALUE", path: "/until" }]],
          [{ outcome: "maybe" }, [{ code: "INVALID_VALUE", path: "/outcome" }]],
          [{ actor: "" }, [{ code: "INVALID_VALUE", path: "/actor" }]],
          [{ kind: "k".repeat(201) }, [{ code: "TOO_LONG", path: "/kind" }]],
          [{ resourceId: "" }, [{ code: "INVALID_VALUE", path: "/resourceId" }]]
        ]
        for (const route of ["/audit", `/namespaces/${ns}/audit`]) {
          for (const [params, details] of cases) {
            expectError(yield* send(baseUrl, "GET", `${route}${query(params)}`, admin.headers), 400, "INVALID_REQUEST", details)
          }
        }
        expectError(yield* send(baseUrl, "GET", "/namespaces/not-a-namespace/audit", admin.headers), 400, "INVALID_REQUEST")
      }))

    it.effect("no entry carries a secret: a Secret's value, an issued service key, a password or a session key", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdmin("audit-secrets@example.com")
        const ns = yield* seedNamespace("audit-secrets")
        const secretValue = `sv-${crypto.randomUUID()}`
        expectData(yield* send(baseUrl, "POST", `/namespaces/${ns}/secrets`, admin.headers, { name: "scanned", value: secretValue }), 201)
        const principalId = yield* createServicePrincipal("audit-secrets-ci")
        const issued = expectData(yield* send(baseUrl, "POST", "/api/auth/service-keys", admin.headers, { servicePrincipalId: principalId, name: "ci" }), 201)
        const signIn = yield* send(baseUrl, "POST", "/api/auth/sign-in/email", {}, { email: admin.email, password: PASSWORD })
        const signedIn = expectData(signIn, 200)
        const cookie = signIn.headers.get("set-cookie") ?? ""
        const sessionToken = /=([^;]+)/.exec(cookie)?.[1]
        expect(sessionToken).toMatch(/.{16,}/)
        // A failed sign-in with another password is audited too, and must not carry it.
        const wrongPassword = `wrong-${crypto.randomUUID()}`
        expect((yield* send(baseUrl, "POST", "/api/auth/sign-in/email", {}, { email: admin.email, password: wrongPassword })).status).toBe(401)

        const entries: Array<unknown> = []
        let cursor: string | null = null
        do {
          const result: Result = yield* send(baseUrl, "GET", `/audit${query(cursor === null ? { limit: "200" } : { limit: "200", cursor })}`, admin.headers)
          entries.push(...expectData(result, 200))
          cursor = result.body.meta.nextCursor
        } while (cursor !== null)
        const kinds = entries.map((entry) => (entry as { kind: string }).kind)
        expect(kinds).toEqual(expect.arrayContaining(["secret.created"]))
        expect(entries.length).toBeGreaterThan(2)
        for (const entry of entries) {
          const text = JSON.stringify(entry)
          for (const secret of [secretValue, issued.key, PASSWORD, wrongPassword, sessionToken!, signedIn.sessionKey].filter((s) => typeof s === "string")) {
            expect(text).not.toContain(secret)
          }
          expect(entry).toEqual(expect.objectContaining({ id: expect.stringMatching(/^\d+$/), at: expect.stringMatching(TIMESTAMP) }))
        }
      }))
  })
})
