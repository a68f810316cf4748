/**
 * Presets over the real API and database (DESIGN §7): the lifecycle with its audit rows, every
 * admission rule with its exact details, IAM visibility, and that a rejected request leaves
 * neither a row nor an audit record.
 */
import { describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { BuiltinRoles } from "@svc/core/iam"
import { NamespaceId, PresetId, RoleId, SecretId } from "@svc/core/schema"
import { Effect } from "effect"
import { bindRole, createServicePrincipal, insertServiceKey } from "../../../testing/identity.js"
import { TestServer } from "../../../testing/server.js"
import {
  anonymous,
  apiTestLayer,
  auditKinds,
  expectData,
  expectError,
  seedAdmin,
  seedHuman,
  seedNamespace,
  send,
  TIMESTAMP,
  withKey
} from "./support/iamServer.js"

const PRESET_ID = /^pre_[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

/** A template using every part: variables of each type, launch settings, a Configuration. */
const fullTemplate = (namespaceId: string, secretId: string) => ({
  variables: {
    mode: { type: "string", default: "dedicated", description: "execution mode" },
    port: { type: "number" },
    verbose: { type: "boolean", required: false, default: false },
    token: { type: "password" }
  },
  agent: {
    executionMode: "{{ vars.mode }}",
    backendId: null,
    harnessAuth: { method: "api_key", source: { kind: "secret", namespaceId, id: secretId } },
    initialWorkspaceFiles: { "AGENTS.md": "Listen on {{vars.port}}." },
    plugins: { "builtin:web.search": { enabled: true } },
    pluginApprovers: [{ channel: "chat", id: "team:T1:user:U1" }],
    repositoryAccess: { defaultProfile: "git-read", repositories: [{ repositoryRef: "svc-main", profile: "git-write" }] }
  },
  configuration: {
    values: { gateway: { port: "{{ vars.port }}", verbose: "{{vars.verbose}}", banner: "port={{ vars.port }}" }, list: [1, "x"] },
    secretBindings: { MODEL_TOKEN: { source: { kind: "secret", namespaceId, id: secretId }, delivery: { type: "env" } } }
  }
})

const nested = (levels: number): unknown => (levels === 0 ? {} : { a: nested(levels - 1) })

const countRows = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const presets = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM presets`
  const audit = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM audit_events WHERE kind LIKE 'preset.%'`
  return { presets: presets[0]!.n, audit: audit[0]!.n }
})

describe("Presets", () => {
  it.layer(apiTestLayer(), { timeout: 120_000 })((it) => {
    it.effect("create, read, list, rename, replace the template and delete; each mutation audited with ids and names only", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdmin("presets-admin@example.com")
        const ns = yield* seedNamespace("presets-a")
        const secretId = SecretId.make()
        const template = fullTemplate(ns, secretId)
        const call = (method: string, path: string, body?: unknown) => send(baseUrl, method, path, admin.headers, body)

        const created = expectData(yield* call("POST", `/namespaces/${ns}/presets`, { name: "web-agent", template }), 201)
        expect(created).toEqual({
          id: expect.stringMatching(PRESET_ID),
          namespaceId: ns,
          name: "web-agent",
          template,
          createdAt: expect.stringMatching(TIMESTAMP),
          updatedAt: expect.stringMatching(TIMESTAMP)
        })
        const path = `/namespaces/${ns}/presets/${created.id}`
        expect(expectData(yield* call("GET", path), 200)).toEqual(created)
        expect(expectData(yield* call("GET", `/namespaces/${ns}/presets`), 200)).toEqual([created])

        const renamed = expectData(yield* call("PATCH", path, { name: "web-agent-2" }), 200)
        expect(renamed).toEqual({ ...created, name: "web-agent-2", updatedAt: expect.stringMatching(TIMESTAMP) })
        // A template replaces the whole template: nothing of the old one is merged in.
        const replacement = { variables: { who: { type: "string" } }, agent: { executionMode: "embedded" }, configuration: { values: { greet: "hi {{ vars.who }}" } } }
        const replaced = expectData(yield* call("PATCH", path, { template: replacement }), 200)
        expect(replaced).toEqual({ ...renamed, template: replacement, updatedAt: expect.stringMatching(TIMESTAMP) })
        expect(Date.parse(replaced.updatedAt)).toBeGreaterThanOrEqual(Date.parse(created.updatedAt))
        const both = expectData(yield* call("PATCH", path, { name: "web-agent-3", template: {} }), 200)
        expect(both).toEqual({ ...replaced, name: "web-agent-3", template: {}, updatedAt: expect.stringMatching(TIMESTAMP) })
        expect(expectData(yield* call("GET", path), 200)).toEqual(both)

        const removed = yield* call("DELETE", path)
        expect(removed.status).toBe(204)
        expect(removed.text).toBe("")
        expectError(yield* call("GET", path), 404, "NOT_FOUND")
        expectError(yield* call("PATCH", path, { name: "again" }), 404, "NOT_FOUND")
        expectError(yield* call("DELETE", path), 404, "NOT_FOUND")
        expect(expectData(yield* call("GET", `/namespaces/${ns}/presets`), 200)).toEqual([])

        const sql = yield* SqlClient.SqlClient
        const audit = yield* sql<{ kind: string; actor_principal_id: string; namespace_id: string; resource_kind: string; details: unknown }>`
          SELECT kind, actor_principal_id, namespace_id, resource_kind, details FROM audit_events WHERE resource_id = ${created.id} ORDER BY id
        `
        const row = (kind: string, details: unknown) => ({ kind, actor_principal_id: admin.principalId, namespace_id: ns, resource_kind: "preset", details })
        expect(audit).toEqual([
          row("preset.created", { name: "web-agent" }),
          row("preset.updated", { name: "web-agent-2", changed: ["name"] }),
          row("preset.updated", { name: "web-agent-2", changed: ["template"] }),
          row("preset.updated", { name: "web-agent-3", changed: ["name", "template"] }),
          row("preset.deleted", { name: "web-agent-3" })
        ])
      }))

    it.effect("admission: every rule answers 400 INVALID_REQUEST with its exact details, and leaves no row and no audit record", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdmin("presets-errors@example.com")
        const ns = yield* seedNamespace("presets-errors")
        const other = yield* seedNamespace("presets-errors-other")
        const post = (body: unknown) => send(baseUrl, "POST", `/namespaces/${ns}/presets`, admin.headers, body)
        const withTemplate = (template: unknown) => post({ name: "p", template })
        const before = yield* countRows

        expectError(yield* post({}), 400, "INVALID_REQUEST", [
          { code: "REQUIRED", path: "/name" },
          { code: "REQUIRED", path: "/template" }
        ])
        expectError(yield* post({ name: "p", template: {}, extra: 1 }), 400, "INVALID_REQUEST", [{ code: "UNKNOWN_FIELD", path: "/extra" }])
        expectError(yield* post({ name: " p", template: {} }), 400, "INVALID_REQUEST", [{ code: "INVALID_FORMAT", path: "/name" }])
        expectError(yield* post({ name: "x".repeat(201), template: {} }), 400, "INVALID_REQUEST", [{ code: "TOO_LONG", path: "/name" }])
        expectError(yield* withTemplate([]), 400, "INVALID_REQUEST", [{ code: "INVALID_TYPE", path: "/template" }])
        expectError(yield* withTemplate({ steps: [] }), 400, "INVALID_REQUEST", [{ code: "UNKNOWN_FIELD", path: "/template/steps" }])
        expectError(yield* withTemplate({ agent: { name: "x" } }), 400, "INVALID_REQUEST", [{ code: "UNKNOWN_FIELD", path: "/template/agent/name" }])
        expectError(yield* withTemplate({ variables: { "1bad": { type: "string" } } }), 400, "INVALID_REQUEST", [
          { code: "INVALID_FORMAT", path: "/template/variables/1bad" }
        ])
        expectError(yield* withTemplate({ variables: { ["v".repeat(65)]: { type: "string" } } }), 400, "INVALID_REQUEST", [
          { code: "INVALID_FORMAT", path: `/template/variables/${"v".repeat(65)}` }
        ])
        expectError(yield* withTemplate({ variables: { x: { type: "date" } } }), 400, "INVALID_REQUEST", [
          { code: "INVALID_VALUE", path: "/template/variables/x/type" }
        ])
        expectError(yield* withTemplate({ variables: { x: { type: "string", secret: true } } }), 400, "INVALID_REQUEST", [
          { code: "UNKNOWN_FIELD", path: "/template/variables/x/secret" }
        ])
        const tooMany = Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`v${i}`, { type: "string" }]))
        expectError(yield* withTemplate({ variables: tooMany }), 400, "INVALID_REQUEST", [{ code: "TOO_LONG", path: "/template/variables" }])
        expectError(yield* withTemplate({ variables: { pw: { type: "password", default: "hunter2-hunter2" } } }), 400, "INVALID_REQUEST", [
          { code: "INVALID_VALUE", path: "/template/variables/pw/default" }
        ])
        expectError(yield* withTemplate({ variables: { n: { type: "number", default: "8080" } } }), 400, "INVALID_REQUEST", [
          { code: "INVALID_TYPE", path: "/template/variables/n/default" }
        ])
        expectError(yield* withTemplate({ variables: { n: { type: "number", required: true, default: 1 } } }), 400, "INVALID_REQUEST", [
          { code: "INVALID_VALUE", path: "/template/variables/n/default" }
        ])
        // Placeholders: every one names a declared variable; every {{ opens one.
        expectError(
          yield* withTemplate({ variables: { a: { type: "string" } }, agent: { executionMode: "{{ vars.b }}" } }),
          400,
          "INVALID_REQUEST",
          [{ code: "INVALID_VALUE", path: "/template/agent/executionMode" }]
        )
        expectError(
          yield* withTemplate({ variables: { a: { type: "string" } }, configuration: { values: { x: ["ok {{ vars.a }}", "{{ a }}", "{{vars.a}"] } } }),
          400,
          "INVALID_REQUEST",
          [
            { code: "INVALID_VALUE", path: "/template/configuration/values/x/1" },
            { code: "INVALID_VALUE", path: "/template/configuration/values/x/2" }
          ]
        )
        expectError(
          yield* withTemplate({ variables: { a: { type: "string" } }, configuration: { values: { "{{ vars.a }}": 1 } } }),
          400,
          "INVALID_REQUEST",
          [{ code: "INVALID_VALUE", path: "/template/configuration/values/{{ vars.a }}" }]
        )
        // Launch settings are checked where no placeholder stands in for them.
        expectError(yield* withTemplate({ agent: { executionMode: "remote" } }), 400, "INVALID_REQUEST", [
          { code: "INVALID_VALUE", path: "/template/agent/executionMode" }
        ])
        expectError(yield* withTemplate({ agent: { harnessAuth: { method: "api_key" } } }), 400, "INVALID_REQUEST", [
          { code: "REQUIRED", path: "/template/agent/harnessAuth/source" }
        ])
        expectError(
          yield* withTemplate({ agent: { harnessAuth: { method: "provider_service_account", serviceAccountId: "sa_1" } } }),
          400,
          "INVALID_REQUEST",
          [{ code: "INVALID_FORMAT", path: "/template/agent/harnessAuth/serviceAccountId" }]
        )
        // NUL is refused before any schema runs (the body guard), so it is reported on its own.
        expectError(yield* withTemplate({ agent: { initialWorkspaceFiles: { "NOTES.md": "x", "SOUL.md": "a\u0000b" } } }), 400, "INVALID_REQUEST", [
          { code: "INVALID_FORMAT", path: "/template/agent/initialWorkspaceFiles/SOUL.md" }
        ])
        expectError(yield* withTemplate({ agent: { initialWorkspaceFiles: { "NOTES.md": "x", "SOUL.md": "\t" } } }), 400, "INVALID_REQUEST", [
          { code: "UNKNOWN_FIELD", path: "/template/agent/initialWorkspaceFiles/NOTES.md" }
        ])
        expectError(yield* withTemplate({ agent: { initialWorkspaceFiles: { "USER.md": "x".repeat(16385) } } }), 400, "INVALID_REQUEST", [
          { code: "TOO_LONG", path: "/template/agent/initialWorkspaceFiles/USER.md" }
        ])
        expectError(yield* withTemplate({ agent: { plugins: { "bad id": {}, good: null } } }), 400, "INVALID_REQUEST", [
          { code: "INVALID_TYPE", path: "/template/agent/plugins/good" }
        ])
        expectError(yield* withTemplate({ agent: { plugins: { "bad id": {} } } }), 400, "INVALID_REQUEST", [
          { code: "INVALID_FORMAT", path: "/template/agent/plugins/bad id" }
        ])
        expectError(yield* withTemplate({ agent: { pluginApprovers: [{ channel: "Chat", id: "a b" }] } }), 400, "INVALID_REQUEST", [
          { code: "INVALID_FORMAT", path: "/template/agent/pluginApprovers/0/channel" },
          { code: "INVALID_FORMAT", path: "/template/agent/pluginApprovers/0/id" }
        ])
        expectError(
          yield* withTemplate({ agent: { repositoryAccess: { defaultProfile: "git-read", repositories: [{ repositoryRef: "r" }, { repositoryRef: "r" }] } } }),
          400,
          "INVALID_REQUEST",
          [{ code: "INVALID_VALUE", path: "/template/agent/repositoryAccess/repositories/1/repositoryRef" }]
        )
        const source = { kind: "secret", namespaceId: ns, id: SecretId.make() }
        expectError(yield* withTemplate({ configuration: { values: {}, secretBindings: { PATH: { source } } } }), 400, "INVALID_REQUEST", [
          { code: "INVALID_VALUE", path: "/template/configuration/secretBindings/PATH" }
        ])
        expectError(
          yield* withTemplate({ configuration: { values: {}, secretBindings: { TOKEN: { source, delivery: { type: "file" } } } } }),
          400,
          "INVALID_REQUEST",
          [{ code: "INVALID_TYPE", path: "/template/configuration/secretBindings/TOKEN/delivery/type" }]
        )
        expectError(yield* withTemplate({ configuration: { secretBindings: {} } }), 400, "INVALID_REQUEST", [
          { code: "REQUIRED", path: "/template/configuration/values" }
        ])
        // A Secret reference names a Secret of the Preset's own Namespace.
        const foreign = { kind: "secret", namespaceId: other, id: SecretId.make() }
        expectError(
          yield* withTemplate({ agent: { harnessAuth: { method: "direct_token", source: foreign } }, configuration: { values: {}, secretBindings: { TOKEN: { source: foreign } } } }),
          400,
          "INVALID_REQUEST",
          [
            { code: "INVALID_VALUE", path: "/template/agent/harnessAuth/source/namespaceId" },
            { code: "INVALID_VALUE", path: "/template/configuration/secretBindings/TOKEN/source/namespaceId" }
          ]
        )
        // The template is stored as jsonb, which refuses an unpaired surrogate: refused here
        // wherever it is, a string that holds a reference and a default included.
        expectError(yield* withTemplate({ variables: { x: { type: "string", description: "half \ud800" } } }), 400, "INVALID_REQUEST", [
          { code: "INVALID_VALUE", path: "/template/variables/x/description" }
        ])
        expectError(yield* withTemplate({ variables: { x: { type: "string", default: "\udfff" } } }), 400, "INVALID_REQUEST", [
          { code: "INVALID_VALUE", path: "/template/variables/x/default" }
        ])
        expectError(yield* withTemplate({ variables: { x: { type: "string" } }, agent: { backendId: "{{ vars.x }}\ud800" } }), 400, "INVALID_REQUEST", [
          { code: "INVALID_VALUE", path: "/template/agent/backendId" }
        ])
        expectError(yield* withTemplate({ variables: { x: { type: "string" } }, configuration: { values: { k: ["{{ vars.x }}", "\ud800{{ vars.x }}"] } } }), 400, "INVALID_REQUEST", [
          { code: "INVALID_VALUE", path: "/template/configuration/values/k/1" }
        ])
        // Depth: the body check of every JSON request (64 levels) reports the first too-deep value.
        expectError(yield* withTemplate({ configuration: { values: nested(70) } }), 400, "INVALID_REQUEST", [
          { code: "TOO_DEEP", path: `/template/configuration/values${"/a".repeat(61)}` }
        ])
        // Size: past the request body limit (448 KiB, below the 1 MiB template limit) it is 413.
        const big = yield* withTemplate({ configuration: { values: { blob: "x".repeat(1024 * 1024 + 1) } } })
        expectError(big, 413, "PAYLOAD_TOO_LARGE")
        expect(yield* countRows).toEqual(before)
      }))

    it.effect("names, ids and Namespaces: 409 for a taken name, 400 for a malformed id or an empty PATCH, 404 for absent or deleted Namespaces", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdmin("presets-names@example.com")
        const ns = yield* seedNamespace("presets-names")
        const other = yield* seedNamespace("presets-names-other")
        const post = (name: string, namespaceId: string = ns) =>
          send(baseUrl, "POST", `/namespaces/${namespaceId}/presets`, admin.headers, { name, template: {} })
        const a = expectData(yield* post("a"), 201)
        const b = expectData(yield* post("b"), 201)
        const before = yield* countRows
        expectError(yield* post("a"), 409, "RESOURCE_CONFLICT")
        expectError(yield* send(baseUrl, "PATCH", `/namespaces/${ns}/presets/${b.id}`, admin.headers, { name: "a" }), 409, "RESOURCE_CONFLICT")
        expectError(yield* send(baseUrl, "PATCH", `/namespaces/${ns}/presets/${b.id}`, admin.headers, {}), 400, "INVALID_REQUEST", [
          { code: "INVALID_VALUE", path: "" }
        ])
        expectError(
          yield* send(baseUrl, "PATCH", `/namespaces/${ns}/presets/${b.id}`, admin.headers, { template: { variables: { pw: { type: "password", default: "x" } } } }),
          400,
          "INVALID_REQUEST",
          [{ code: "INVALID_VALUE", path: "/template/variables/pw/default" }]
        )
        expect(yield* countRows).toEqual(before)
        expect((yield* auditKinds(b.id)).map((row) => row.kind)).toEqual(["preset.created"])
        expect(expectData(yield* send(baseUrl, "GET", `/namespaces/${ns}/presets/${b.id}`, admin.headers), 200)).toEqual(b)
        // Names are unique per Namespace only.
        expect(expectData(yield* post("a", other), 201).namespaceId).toBe(other)

        // A Secret's id in a Preset's place is malformed: 400, as for every id in a path.
        expectError(yield* send(baseUrl, "GET", `/namespaces/${ns}/presets/${SecretId.make()}`, admin.headers), 400, "INVALID_REQUEST", [
          { code: "INVALID_FORMAT", path: "/presetId" }
        ])
        expectError(yield* send(baseUrl, "GET", `/namespaces/${ns}/presets/${PresetId.make()}`, admin.headers), 404, "NOT_FOUND")
        // A Preset is addressed through its own Namespace only.
        const inOther = expectData(yield* post("elsewhere", other), 201)
        expectError(yield* send(baseUrl, "GET", `/namespaces/${ns}/presets/${inOther.id}`, admin.headers), 404, "NOT_FOUND")
        expectError(yield* send(baseUrl, "PATCH", `/namespaces/${ns}/presets/${inOther.id}`, admin.headers, { name: "z" }), 404, "NOT_FOUND")
        expectError(yield* send(baseUrl, "DELETE", `/namespaces/${ns}/presets/${inOther.id}`, admin.headers), 404, "NOT_FOUND")

        const absent = NamespaceId.make()
        expectError(yield* post("a", absent), 404, "NOT_FOUND")
        expectError(yield* send(baseUrl, "GET", `/namespaces/${absent}/presets`, admin.headers), 404, "NOT_FOUND")
        expectError(yield* send(baseUrl, "GET", `/namespaces/${absent}/presets/${PresetId.make()}`, admin.headers), 404, "NOT_FOUND")
        const deleted = yield* seedNamespace("presets-names-deleted")
        const kept = expectData(yield* post("kept", deleted), 201)
        const sql = yield* SqlClient.SqlClient
        yield* sql`UPDATE namespaces SET status = 'deleted' WHERE id = ${deleted}`
        expectError(yield* post("b", deleted), 404, "NOT_FOUND")
        expectError(yield* send(baseUrl, "GET", `/namespaces/${deleted}/presets`, admin.headers), 404, "NOT_FOUND")
        expectError(yield* send(baseUrl, "GET", `/namespaces/${deleted}/presets/${kept.id}`, admin.headers), 404, "NOT_FOUND")
        expectError(yield* send(baseUrl, "PATCH", `/namespaces/${deleted}/presets/${kept.id}`, admin.headers, { name: "w" }), 404, "NOT_FOUND")
        expectError(yield* send(baseUrl, "DELETE", `/namespaces/${deleted}/presets/${kept.id}`, admin.headers), 404, "NOT_FOUND")
        expectError(yield* send(baseUrl, "GET", `/namespaces/${ns}/presets`, anonymous), 401, "UNAUTHENTICATED")
        expect(a.name).toBe("a")
      }))

    it.effect("IAM: other Namespaces' callers get 403 or 404; the list shows exactly the Presets the caller may read", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdmin("presets-iam@example.com")
        const human = yield* seedHuman("presets-iam-human@example.com")
        const ns = yield* seedNamespace("presets-iam")
        const other = yield* seedNamespace("presets-iam-other")
        const create = (name: string) => send(baseUrl, "POST", `/namespaces/${ns}/presets`, admin.headers, { name, template: {} })
        const a = expectData(yield* create("a"), 201)
        const b = expectData(yield* create("b"), 201)
        const before = yield* countRows

        const foreign = yield* createServicePrincipal("presets-foreign", other)
        yield* bindRole(foreign, BuiltinRoles.namespaceAdmin.id, { kind: "namespace", id: other })
        const foreignKey = withKey((yield* insertServiceKey(foreign, { namespaceId: other })).key)
        expectError(yield* send(baseUrl, "POST", `/namespaces/${ns}/presets`, foreignKey, { name: "c", template: {} }), 403, "FORBIDDEN")
        expectError(yield* send(baseUrl, "GET", `/namespaces/${ns}/presets`, foreignKey), 403, "FORBIDDEN")
        expectError(yield* send(baseUrl, "GET", `/namespaces/${ns}/presets/${a.id}`, foreignKey), 403, "FORBIDDEN")
        expectError(yield* send(baseUrl, "PATCH", `/namespaces/${ns}/presets/${a.id}`, foreignKey, { name: "z" }), 403, "FORBIDDEN")
        expectError(yield* send(baseUrl, "DELETE", `/namespaces/${ns}/presets/${a.id}`, foreignKey), 403, "FORBIDDEN")

        expectError(yield* send(baseUrl, "GET", `/namespaces/${ns}/presets`, human.headers), 404, "NOT_FOUND")
        expectError(yield* send(baseUrl, "GET", `/namespaces/${ns}/presets/${a.id}`, human.headers), 404, "NOT_FOUND")
        expectError(yield* send(baseUrl, "PATCH", `/namespaces/${ns}/presets/${a.id}`, human.headers, { name: "z" }), 404, "NOT_FOUND")
        expectError(yield* send(baseUrl, "DELETE", `/namespaces/${ns}/presets/${a.id}`, human.headers), 404, "NOT_FOUND")
        expect(yield* countRows).toEqual(before)

        // namespace:read on the Namespace and preset:read on Preset a only: the list shows a.
        const sql = yield* SqlClient.SqlClient
        const nsReader = RoleId.make()
        const presetReader = RoleId.make()
        yield* sql`INSERT INTO roles (id, namespace_id, name, permissions) VALUES (${nsReader}, ${ns}, 'ns-reader', ARRAY['namespace:read'])`
        yield* sql`INSERT INTO roles (id, namespace_id, name, permissions) VALUES (${presetReader}, ${ns}, 'preset-reader', ARRAY['preset:read'])`
        const reader = yield* createServicePrincipal("presets-reader", ns)
        yield* bindRole(reader, nsReader, { kind: "namespace", id: ns })
        yield* bindRole(reader, presetReader, { kind: "preset", id: a.id, namespaceId: ns })
        const readerKey = withKey((yield* insertServiceKey(reader, { namespaceId: ns })).key)
        expect(expectData(yield* send(baseUrl, "GET", `/namespaces/${ns}/presets`, readerKey), 200)).toEqual([a])
        expect(expectData(yield* send(baseUrl, "GET", `/namespaces/${ns}/presets/${a.id}`, readerKey), 200)).toEqual(a)
        expectError(yield* send(baseUrl, "GET", `/namespaces/${ns}/presets/${b.id}`, readerKey), 404, "NOT_FOUND")
        expectError(yield* send(baseUrl, "PATCH", `/namespaces/${ns}/presets/${a.id}`, readerKey, { name: "z" }), 403, "FORBIDDEN")
        expectError(yield* send(baseUrl, "DELETE", `/namespaces/${ns}/presets/${a.id}`, readerKey), 403, "FORBIDDEN")
        expectError(yield* send(baseUrl, "POST", `/namespaces/${ns}/presets`, readerKey, { name: "c", template: {} }), 403, "FORBIDDEN")

        // The Namespace editor creates and updates but cannot delete; the viewer reads and pages.
        const editor = yield* createServicePrincipal("presets-editor", ns)
        yield* bindRole(editor, BuiltinRoles.namespaceEditor.id, { kind: "namespace", id: ns })
        const editorKey = withKey((yield* insertServiceKey(editor, { namespaceId: ns })).key)
        const c = expectData(yield* send(baseUrl, "POST", `/namespaces/${ns}/presets`, editorKey, { name: "c", template: {} }), 201)
        expect(expectData(yield* send(baseUrl, "PATCH", `/namespaces/${ns}/presets/${c.id}`, editorKey, { name: "c2" }), 200).name).toBe("c2")
        expectError(yield* send(baseUrl, "DELETE", `/namespaces/${ns}/presets/${c.id}`, editorKey), 403, "FORBIDDEN")
        expect((yield* auditKinds(c.id)).map((row) => [row.kind, row.actor_principal_id])).toEqual([
          ["preset.created", editor],
          ["preset.updated", editor],
          // The refused delete is a denial (SPEC 6), not a Preset mutation.
          ["authorization.denied", editor]
        ])
        const viewer = yield* createServicePrincipal("presets-viewer", ns)
        yield* bindRole(viewer, BuiltinRoles.namespaceViewer.id, { kind: "namespace", id: ns })
        const viewerKey = withKey((yield* insertServiceKey(viewer, { namespaceId: ns })).key)
        const all = expectData(yield* send(baseUrl, "GET", `/namespaces/${ns}/presets`, admin.headers), 200)
        const sorted = [...all].sort((x: { id: string }, y: { id: string }) => (x.id < y.id ? -1 : 1))
        expect(all).toEqual(sorted)
        expect(sorted).toHaveLength(3)
        expect(expectData(yield* send(baseUrl, "GET", `/namespaces/${ns}/presets`, viewerKey), 200)).toEqual(sorted)
        expect(expectData(yield* send(baseUrl, "GET", `/namespaces/${ns}/presets?limit=1`, viewerKey), 200)).toEqual([sorted[0]])
        expect(expectData(yield* send(baseUrl, "GET", `/namespaces/${ns}/presets?after=${sorted[0].id}`, viewerKey), 200)).toEqual(sorted.slice(1))
        expectError(yield* send(baseUrl, "PATCH", `/namespaces/${ns}/presets/${a.id}`, viewerKey, { name: "z" }), 403, "FORBIDDEN")

        // A binding may name a Preset; one that does not exist is 404.
        const target = yield* createServicePrincipal("presets-target", ns)
        const bind = (id: string) =>
          send(baseUrl, "POST", `/namespaces/${ns}/iam/access-bindings`, admin.headers, {
            principalId: target,
            roleId: BuiltinRoles.namespaceViewer.id,
            resource: { kind: "preset", id }
          })
        expect((yield* bind(a.id)).status).toBe(201)
        expectError(yield* bind(PresetId.make()), 404, "NOT_FOUND")
      }))
  })
})
