/**
 * SPEC 2.3, 3 and 4.2 rules of `POST /namespaces` and `DELETE /namespaces/{id}` that need a
 * Compute Driver able to bind an operator-prepared runtime namespace (`kubernetes`), or a caller
 * holding `namespace:create` without `installation:administer` (the `local` order of checks is in
 * namespaces.test.ts). No worker runs here: a Namespace stays in the status the test gives it.
 */
import { describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { SvcApi } from "@svc/api"
import { decodeInstallationConfig } from "@svc/core/config"
import { Effect, Either } from "effect"
import { documentOf } from "../../../testing/openapiDoc.js"
import { TestServer } from "../../../testing/server.js"
import {
  apiTestLayer,
  auditKinds,
  expectData,
  expectNamespaceRefused,
  seedAdmin,
  seedNamespaceCreator,
  send,
  TIMESTAMP
} from "./support/iamServer.js"

const kubernetes = Either.getOrThrow(decodeInstallationConfig("test", { drivers: { compute: { id: "kubernetes" } } }))

const NS_ID = /^ns_[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

describe("the public Namespace status (SPEC 2.3, 3: `deleted` is never a public status)", () => {
  it("the contract documents exactly provisioning, ready, failed and deleting", () => {
    const namespace = documentOf(SvcApi).components.schemas["Namespace"]
    expect(namespace?.["properties"]).toMatchObject({
      status: { enum: ["provisioning", "ready", "failed", "deleting"] }
    })
  })
})

describe("existingNamespace on a Compute Driver that binds one (kubernetes)", () => {
  it.layer(apiTestLayer(kubernetes), { timeout: 120_000 })((it) => {
    it.effect("is persisted and returned by create, read and list; a Namespace without it omits the field", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdmin("ns-bind-admin@example.com")
        const created = expectData(
          yield* send(baseUrl, "POST", "/namespaces", admin.headers, { name: "bound", existingNamespace: "ops-team" }),
          201
        )
        expect(created).toEqual({
          id: expect.stringMatching(NS_ID),
          name: "bound",
          status: "provisioning",
          existingNamespace: "ops-team",
          createdAt: expect.stringMatching(TIMESTAMP),
          updatedAt: expect.stringMatching(TIMESTAMP)
        })
        expect(expectData(yield* send(baseUrl, "GET", `/namespaces/${created.id}`, admin.headers), 200)).toEqual(created)
        const plain = expectData(yield* send(baseUrl, "POST", "/namespaces", admin.headers, { name: "plain" }), 201)
        expect(Object.keys(plain).sort()).toEqual(["createdAt", "id", "name", "status", "updatedAt"])
        const listed = expectData(yield* send(baseUrl, "GET", "/namespaces", admin.headers), 200) as ReadonlyArray<{ id: string }>
        expect(listed.find((n) => n.id === created.id)).toEqual(created)
        expect(listed.find((n) => n.id === plain.id)).toEqual(plain)
        const audit = yield* auditKinds(created.id)
        expect(audit.map((row) => [row.kind, row.details])).toEqual([
          ["namespace.created", { name: "bound", existingNamespace: "ops-team" }]
        ])
      }))

    it.effect("needs installation:administer besides namespace:create (403, nothing created)", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const creator = yield* seedNamespaceCreator("ns-bind-creator@example.com")
        const refused = yield* send(baseUrl, "POST", "/namespaces", creator.headers, { name: "bound-by-creator", existingNamespace: "ops-x" })
        yield* expectNamespaceRefused(refused, 403, "FORBIDDEN", "bound-by-creator")
        // SPEC 6: the denial is audited (and survives the refused request).
        const sql = yield* SqlClient.SqlClient
        const denials = yield* sql<{ resource_kind: string; details: unknown }>`
          SELECT resource_kind, details FROM audit_events
          WHERE kind = 'authorization.denied' AND actor_principal_id = ${creator.principalId}
        `
        expect(denials).toEqual([{ resource_kind: "installation", details: { permission: "installation:administer", reason: "no-grant" } }])
        // Without the option, namespace:create is enough.
        const created = expectData(yield* send(baseUrl, "POST", "/namespaces", creator.headers, { name: "bound-by-creator" }), 201)
        expect(created).toMatchObject({ name: "bound-by-creator", status: "provisioning" })
      }))

    it.effect("an invalid existingNamespace is 400 INVALID_REQUEST at /existingNamespace, nothing created", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdmin("ns-bind-invalid@example.com")
        for (const existingNamespace of [7, null]) {
          const result = yield* send(baseUrl, "POST", "/namespaces", admin.headers, { name: "bad-binding", existingNamespace })
          yield* expectNamespaceRefused(result, 400, "INVALID_REQUEST", "bad-binding")
          expect(result.body.error.details).toEqual([{ code: "INVALID_TYPE", path: "/existingNamespace" }])
        }
      }))

    it.effect("existingNamespace must be a Kubernetes namespace name (a DNS-1123 label), or 400 with nothing created", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdmin("ns-bind-label@example.com")
        const creator = yield* seedNamespaceCreator("ns-bind-label-creator@example.com")
        const notLabels = [
          "", " ops", "..", "../kube-system", "ops/../kube-system", "ops%2Fteam", "ops/team", "Ops", "OPS",
          "-ops", "ops-", "ops_team", "ops.team", "ops team", "ops:team", "\u00e9quipe", "ops\u0000"
        ]
        for (const existingNamespace of notLabels) {
          for (const caller of [admin, creator]) {
            // Checked with the body, before authorization: the same 400 for a caller without administer.
            const result = yield* send(baseUrl, "POST", "/namespaces", caller.headers, { name: "bad-label", existingNamespace })
            yield* expectNamespaceRefused(result, 400, "INVALID_REQUEST", "bad-label")
            expect(result.body.error.details, JSON.stringify(existingNamespace)).toEqual([{ code: "INVALID_FORMAT", path: "/existingNamespace" }])
          }
        }
        const tooLong = yield* send(baseUrl, "POST", "/namespaces", admin.headers, { name: "bad-label", existingNamespace: "a".repeat(64) })
        yield* expectNamespaceRefused(tooLong, 400, "INVALID_REQUEST", "bad-label")
        expect(tooLong.body.error.details).toEqual([{ code: "TOO_LONG", path: "/existingNamespace" }])

        for (const existingNamespace of ["a", "0", "ops-team-1", "9ops", "a".repeat(63)]) {
          const created = expectData(yield* send(baseUrl, "POST", "/namespaces", admin.headers, { name: `label-${existingNamespace}`, existingNamespace }), 201)
          expect(created.existingNamespace).toBe(existingNamespace)
        }
      }))

    it.effect("existingNamespace must not be one of the cluster's own (default, kube-*): 400 before authorization, nothing written", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const sql = yield* SqlClient.SqlClient
        const admin = yield* seedAdmin("ns-bind-reserved@example.com")
        const creator = yield* seedNamespaceCreator("ns-bind-reserved-creator@example.com")
        const written = sql<{ namespaces: number; work: number; audit: number }>`
          SELECT (SELECT count(*)::int FROM namespaces) AS namespaces, (SELECT count(*)::int FROM work_items) AS work,
            (SELECT count(*)::int FROM audit_events) AS audit
        `
        const [before] = yield* written
        for (const existingNamespace of ["default", "kube-system", "kube-public", "kube-node-lease", "kube-x", "kube-0-1"]) {
          for (const caller of [admin, creator]) {
            // Checked with the body, before authorization: the same 400 for a caller without administer.
            const result = yield* send(baseUrl, "POST", "/namespaces", caller.headers, { name: "reserved", existingNamespace })
            yield* expectNamespaceRefused(result, 400, "INVALID_REQUEST", "reserved")
            expect(result.body.error.details, existingNamespace).toEqual([{ code: "INVALID_VALUE", path: "/existingNamespace" }])
          }
        }
        // Nothing written: no Namespace, no work, no audit record (not even the creator's denial).
        expect(yield* written).toEqual([before])
        // Only those: names that merely contain or resemble them are labels like any other.
        for (const existingNamespace of ["kube", "kubesystem", "my-kube-system", "default-ops", "defaults", "ops-default"]) {
          const created = expectData(yield* send(baseUrl, "POST", "/namespaces", admin.headers, { name: `near-${existingNamespace}`, existingNamespace }), 201)
          expect(created.existingNamespace).toBe(existingNamespace)
        }
      }))

    it("the contract states the DNS-1123 label rule for existingNamespace, and the cluster's own names it refuses", () => {
      const request = documentOf(SvcApi).components.schemas["CreateNamespaceRequest"] as { properties: Record<string, unknown> }
      expect(request.properties["existingNamespace"]).toMatchObject({
        type: "string",
        maxLength: 63,
        pattern: "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$",
        not: { pattern: "^(default$|kube-)" }
      })
    })

    it.effect("DELETE takes provisioning, ready and failed to deleting (202) with a teardown queued", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const sql = yield* SqlClient.SqlClient
        const admin = yield* seedAdmin("ns-delete-states@example.com")
        for (const status of ["provisioning", "ready", "failed"] as const) {
          const created = expectData(yield* send(baseUrl, "POST", "/namespaces", admin.headers, { name: `from-${status}` }), 201)
          yield* sql`UPDATE namespaces SET status = ${status} WHERE id = ${created.id}`
          const deleting = expectData(yield* send(baseUrl, "DELETE", `/namespaces/${created.id}`, admin.headers), 202)
          expect(deleting).toEqual({ ...created, status: "deleting", updatedAt: expect.stringMatching(TIMESTAMP) })
          const teardowns = yield* sql`SELECT 1 FROM work_items WHERE kind = 'namespace.teardown' AND key = ${created.id}`
          expect(teardowns).toHaveLength(1)
          expect(expectData(yield* send(baseUrl, "GET", `/namespaces/${created.id}`, admin.headers), 200).status).toBe("deleting")
        }
      }))
  })
})
