/**
 * Issue 11, item 3: list pages are encoded trusting their items (`ListEnvelope`,
 * `trustedEncoding`) and their rows decoded by prepared trusted decoders. What goes on the wire
 * must be exactly what Effect's full encoder writes for the same page: for every list route,
 * over rows with optional fields present and absent, nested JSON, a saved field that no longer
 * reads (`configurationReadError`) and a revision, the raw body equals the full encoding of the
 * page it carries, and the trusted encoder and the full one write the same bytes for it.
 */
import { describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import * as Api from "@svc/core/api"
import { CurrentRequestId, Envelope, ListEnvelope, Meta, NamespaceId, ServiceAccountId } from "@svc/core/schema"
import { Effect, Schema } from "effect"
import { bindInstallationAdmin } from "../../../testing/identity.js"
import { TestServer } from "../../../testing/server.js"
import { apiTestLayer, expectData, seedNamespace, seedServiceKey, send } from "./support/iamServer.js"
import { configurationRow, credentialSourceRow, customRole, nsBinding, presetRow, revisionRow, secretRow } from "./support/authzFixtures.js"

/**
 * One list route: each item is written exactly as the route's single read (`{path}/{id}`,
 * encoded in full by Effect) writes it, the body equals the full encoding of the page it
 * carries, and the trusted encoder writes the same bytes for that page. Resolves to the
 * number of items.
 */
const sameBytes = <A, I>(
  baseUrl: string,
  headers: Record<string, string>,
  path: string,
  Item: Schema.Schema<A, I>,
  singleOnly: ReadonlyArray<string>
) =>
  Effect.gen(function* () {
    const result = yield* send(baseUrl, "GET", path, headers)
    const items: ReadonlyArray<{ readonly id: string }> = expectData(result, 200)
    for (const item of items) {
      const single = yield* send(baseUrl, "GET", `${path}/${item.id}`, headers)
      const read: Record<string, unknown> = expectData(single, 200)
      for (const key of singleOnly) delete read[key]
      expect(JSON.stringify(item), `${path}/${item.id}`).toBe(JSON.stringify(read))
    }
    const requestId: string = result.body.meta.requestId
    const full = Envelope(Schema.Array(Item), "Full")
    const page = Schema.decodeUnknownSync(full)(result.body)
    expect(result.text, path).toBe(yield* written(full, page, requestId))
    expect(yield* written(ListEnvelope(Schema.Array(Item), "Trusted"), page, requestId), path).toBe(result.text)
    return items.length
  })

/** Every list route but the audit trail's (its page has its own envelope, below). */
const everyList = (baseUrl: string, headers: Record<string, string>, ns: string, agentId: string) => {
  const check = <A, I>(path: string, Item: Schema.Schema<A, I>, singleOnly: ReadonlyArray<string> = []) =>
    Effect.map(sameBytes(baseUrl, headers, path, Item, singleOnly), (n) => [path, n] as const)
  return Effect.all([
    check("/namespaces", Api.Namespace),
    check(`/namespaces/${ns}/agents`, Api.Agent),
    check(`/namespaces/${ns}/agents/${agentId}/revisions`, Api.AgentRevision),
    check(`/namespaces/${ns}/configurations`, Api.Configuration),
    check(`/namespaces/${ns}/secrets`, Api.Secret),
    check(`/namespaces/${ns}/presets`, Api.Preset),
    check(`/namespaces/${ns}/service-accounts`, Api.ServiceAccount),
    // A single read adds the source's live `status`; a list makes no gateway call and has none (SPEC).
    check(`/namespaces/${ns}/credential-sources`, Api.CredentialSource, ["status"]),
    check(`/namespaces/${ns}/iam/roles`, Api.Role),
    check(`/namespaces/${ns}/iam/access-bindings`, Api.AccessBinding),
    check("/iam/service-principals", Api.ServicePrincipal),
    check(`/namespaces/${ns}/iam/service-principals`, Api.ServicePrincipal)
  ]).pipe(Effect.map(Object.fromEntries<number>))
}

const AuditWire = Schema.Struct({
  data: Schema.Array(Api.AuditEntry),
  meta: Schema.Struct({ ...Meta.fields, nextCursor: Schema.NullOr(Schema.String) })
})

/** `value` encoded by `schema` for the request `requestId`, as the JSON the server writes. */
const written = <A, I>(schema: Schema.Schema<A, I>, value: A, requestId: string) =>
  Schema.encode(schema)(value).pipe(Effect.provideService(CurrentRequestId, requestId), Effect.map((encoded) => JSON.stringify(encoded)))

/** Rows that exercise the Agent item's optional and computed fields. */
const seedAgents = (ns: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const { agentId, revisionId } = yield* revisionRow(ns)
    const secretId = yield* secretRow(ns)
    yield* sql`
      UPDATE agents SET active_revision_id = ${revisionId}, workspace_defaults_id = 'wsd-1',
        settings = ${JSON.stringify({ harnessAuth: { method: "api_key", source: { kind: "secret", namespaceId: ns, id: secretId } } })}::jsonb
      WHERE id = ${agentId}
    `
    const { agentId: unreadable } = yield* revisionRow(ns)
    yield* sql`UPDATE agents SET settings = '{"harnessAuth": {"method": "retired-method"}}'::jsonb WHERE id = ${unreadable}`
    const configurationId = yield* configurationRow(ns)
    yield* sql`
      UPDATE configurations SET "values" = ${JSON.stringify({ models: { providers: { a: { baseUrl: "http://x", models: [{ id: "m", n: 1.5, ok: true, none: null }] } } } })}::jsonb
      WHERE id = ${configurationId}
    `
    // A ready service account with an issued credential (its optional fields present).
    yield* sql`
      INSERT INTO service_accounts (id, namespace_id, name, backend_id, upstream_name, upstream_account_id, state,
        credential_kind, credential_secret_id, credential_secret_key, credential_issued_at, credential_expires_at)
      VALUES (${ServiceAccountId.make()}, ${ns}, 'sa-1', 'vendor', 'upstream-sa', 'acct-1', 'ready',
        'api_key', ${secretId}, 'API_KEY', now(), now() + interval '1 day')
    `
    return agentId
  })

describe("list encoding", () => {
  it.layer(apiTestLayer(), { timeout: 120_000 })((it) => {
    it.effect("every list page is byte-for-byte Effect's full encoding of its items", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedServiceKey("list-encoding")
        yield* bindInstallationAdmin(admin.principalId)
        const ns = yield* seedNamespace(`enc-${crypto.randomUUID().slice(0, 8)}`)
        const agentId = yield* seedAgents(ns)
        yield* presetRow(ns)
        yield* credentialSourceRow(ns)
        yield* customRole(ns)
        // Audit entries (with details) come from requests through the API.
        expectData(yield* send(baseUrl, "POST", `/namespaces/${ns}/secrets`, admin.headers, { name: "audited", value: "v" }), 201)
        expectData(yield* send(baseUrl, "POST", `/namespaces/${ns}/iam/roles`, admin.headers, { name: "audited", permissions: ["secret:read"] }), 201)
        yield* nsBinding(ns)
        const seen = yield* everyList(baseUrl, admin.headers, ns, agentId)
        for (const [path, items] of Object.entries(seen)) expect(items, path).toBeGreaterThan(0)
        // The rich rows are there: one Agent with its optional fields, one whose harness auth no longer reads.
        expect(seen[`/namespaces/${ns}/agents`]).toBe(2)
        const agents = expectData(yield* send(baseUrl, "GET", `/namespaces/${ns}/agents`, admin.headers), 200)
        expect(agents.map((a: { configurationReadError?: unknown; activeRevisionId?: unknown }) => [a.configurationReadError !== undefined, a.activeRevisionId !== undefined]).sort())
          .toEqual([[false, true], [true, false]])
        for (const path of ["/audit", `/namespaces/${ns}/audit`]) {
          const result = yield* send(baseUrl, "GET", `${path}?limit=200`, admin.headers)
          expect(expectData(result, 200).length, path).toBeGreaterThan(0)
          const requestId: string = result.body.meta.requestId
          expect(result.text, path).toBe(yield* written(AuditWire, Schema.decodeUnknownSync(AuditWire)(result.body), requestId))
          const page = Schema.decodeUnknownSync(Api.AuditPageResponse)(result.body)
          expect(yield* written(Api.AuditPageResponse, page, requestId), path).toBe(result.text)
        }
      }))

    it.effect("a client still decodes a list page in full: a bad id or timestamp in a page is refused as before", () =>
      Effect.gen(function* () {
        const wire = {
          data: [{ id: "ns_not-an-id", name: "n", status: "ready", createdAt: "2026-01-01T00:00:00.000Z", updatedAt: "2026-13-01T00:00:00.000Z" }],
          meta: { requestId: "req_00000000-0000-4000-8000-000000000000" }
        }
        const message = <A, I>(schema: Schema.Schema<A, I>) =>
          Schema.decodeUnknownEither(schema)(wire).pipe((either) => (either._tag === "Left" ? either.left.message : "decoded"))
        const before = message(Envelope(Api.NamespaceList, "NamespaceListResponse"))
        expect(before).not.toBe("decoded")
        expect(message(ListEnvelope(Api.NamespaceList, "NamespaceListResponse"))).toBe(before)
        expect(NamespaceId.isValid(wire.data[0]!.id)).toBe(false)
        return yield* Effect.void
      }))
  })
})
