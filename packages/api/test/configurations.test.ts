/**
 * Configurations over the real API and database (SPEC 2.8, 4.3): the lifecycle, every
 * validation rule with its detail code and pointer, the reserved destination names one by one,
 * Secret `operate` on bindings, references that block deletes, and that rejected requests leave
 * no row behind.
 */
import { describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { BuiltinRoles } from "@svc/core/iam"
import {
  ConfigurationId,
  Limits,
  NamespaceId,
  ReservedEnvironmentNames,
  ReservedEnvironmentPrefixes,
  reservedEnvironmentName,
  RoleId,
  SecretId
} from "@svc/core/schema"
import { Effect } from "effect"
import { bindRole, createServicePrincipal, insertServiceKey } from "../../../testing/identity.js"
import { TestServer } from "../../../testing/server.js"
import {
  apiTestLayer,
  expectData,
  expectError,
  type Headers,
  seedAdmin,
  seedNamespace,
  send,
  TIMESTAMP,
  withKey
} from "./support/iamServer.js"

const CONFIGURATION_ID = /^cfg_[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

const counts = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const [row] = yield* sql<{ configurations: number; refs: number; work: number }>`
    SELECT (SELECT count(*)::int FROM configurations) AS configurations,
      (SELECT count(*)::int FROM configuration_secret_refs) AS refs,
      (SELECT count(*)::int FROM work_items) AS work
  `
  return row!
})

const binding = (namespaceId: string, id: string) => ({ source: { kind: "secret", namespaceId, id } })

/** A service key whose principal holds a custom Namespace Role with exactly `permissions`. */
const keyWith = (ns: string, permissions: ReadonlyArray<string>, onSecret?: { id: string; permissions: ReadonlyArray<string> }) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const principal = yield* createServicePrincipal(`custom-${Math.random()}`, ns)
    const role = RoleId.make()
    yield* sql`INSERT INTO roles (id, namespace_id, name, permissions) VALUES (${role}, ${ns}, ${`r-${role}`}, ${permissions})`
    yield* bindRole(principal, role, { kind: "namespace", id: ns })
    if (onSecret !== undefined) {
      const secretRole = RoleId.make()
      yield* sql`INSERT INTO roles (id, namespace_id, name, permissions) VALUES (${secretRole}, ${ns}, ${`r-${secretRole}`}, ${onSecret.permissions})`
      yield* bindRole(principal, secretRole, { kind: "secret", id: onSecret.id, namespaceId: ns })
    }
    const { key } = yield* insertServiceKey(principal, { namespaceId: ns })
    return { principal, headers: withKey(key) }
  })

describe("Configurations", () => {
  it.layer(apiTestLayer(), { timeout: 120_000 })((it) => {
    it.effect("create, read, list, replace values, clear bindings, delete; audited; no work queued", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdmin("cfg-admin@example.com")
        const ns = yield* seedNamespace("cfg-a")
        const call = (method: string, path: string, body?: unknown) => send(baseUrl, method, path, admin.headers, body)
        const secret = expectData(yield* call("POST", `/namespaces/${ns}/secrets`, { name: "search-key", value: "s3cr3t-value" }), 201)
        const before = yield* counts
        const values = { agents: { defaults: { model: "fake/model" } }, nested: [1, 2.5, true, null, "x"] }
        const created = expectData(yield* call("POST", `/namespaces/${ns}/configurations`, {
          kind: "agent",
          values,
          secretBindings: { SEARCH_API_KEY: { ...binding(ns, secret.id), delivery: { type: "env" } } }
        }), 201)
        expect(created).toEqual({
          id: expect.stringMatching(CONFIGURATION_ID),
          namespaceId: ns,
          kind: "agent",
          generation: 1,
          values,
          secretBindings: { SEARCH_API_KEY: { source: { kind: "secret", namespaceId: ns, id: secret.id }, delivery: { type: "env" } } },
          createdAt: expect.stringMatching(TIMESTAMP),
          updatedAt: expect.stringMatching(TIMESTAMP)
        })
        const path = `/namespaces/${ns}/configurations/${created.id}`
        expect(expectData(yield* call("GET", path), 200)).toEqual(created)
        expect(expectData(yield* call("GET", `/namespaces/${ns}/configurations`), 200)).toEqual([created])

        // PATCH replaces values, keeps omitted bindings, adds one to the generation.
        const second = expectData(yield* call("PATCH", path, { values: { replaced: true } }), 200)
        expect(second).toEqual({ ...created, generation: 2, values: { replaced: true }, updatedAt: expect.stringMatching(TIMESTAMP) })
        // The bound Secret cannot be deleted while the binding exists.
        const refused = yield* call("DELETE", `/namespaces/${ns}/secrets/${secret.id}`)
        expectError(refused, 409, "RESOURCE_CONFLICT")
        expect(refused.body.error.message).toContain(created.id)
        // An explicit {} clears the bindings; then the Secret can go.
        const third = expectData(yield* call("PATCH", path, { values: {}, secretBindings: {} }), 200)
        expect(third).toEqual({ ...created, generation: 3, values: {}, secretBindings: {}, updatedAt: expect.stringMatching(TIMESTAMP) })
        expect((yield* call("DELETE", `/namespaces/${ns}/secrets/${secret.id}`)).status).toBe(204)

        const after = yield* counts
        expect(after.work).toBe(before.work)

        const removed = yield* call("DELETE", path)
        expect(removed.status).toBe(204)
        expect(removed.text).toBe("")
        expectError(yield* call("GET", path), 404, "NOT_FOUND")
        expectError(yield* call("PATCH", path, { values: {} }), 404, "NOT_FOUND")
        expectError(yield* call("DELETE", path), 404, "NOT_FOUND")
        expect(expectData(yield* call("GET", `/namespaces/${ns}/configurations`), 200)).toEqual([])

        const sql = yield* SqlClient.SqlClient
        const audit = yield* sql<{ kind: string; actor_principal_id: string; namespace_id: string; details: unknown }>`
          SELECT kind, actor_principal_id, namespace_id, details FROM audit_events WHERE resource_id = ${created.id} ORDER BY id
        `
        expect(audit).toEqual([
          { kind: "configuration.created", actor_principal_id: admin.principalId, namespace_id: ns, details: { kind: "agent", generation: 1, boundSecretIds: [secret.id] } },
          { kind: "configuration.updated", actor_principal_id: admin.principalId, namespace_id: ns, details: { generation: 2, boundSecretIds: [secret.id] } },
          { kind: "configuration.updated", actor_principal_id: admin.principalId, namespace_id: ns, details: { generation: 3, boundSecretIds: [] } },
          { kind: "configuration.deleted", actor_principal_id: admin.principalId, namespace_id: ns, details: { generation: 3 } }
        ])
      }))

    it.effect("bad bodies are 400 with the detail code and pointer, and write nothing", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdmin("cfg-errors@example.com")
        const ns = yield* seedNamespace("cfg-errors")
        const secret = expectData(yield* send(baseUrl, "POST", `/namespaces/${ns}/secrets`, admin.headers, { name: "k", value: "v" }), 201)
        const before = yield* counts
        const post = (body: unknown) => send(baseUrl, "POST", `/namespaces/${ns}/configurations`, admin.headers, body)
        const bad = (body: unknown, details: ReadonlyArray<unknown>) =>
          Effect.map(post(body), (result) => expectError(result, 400, "INVALID_REQUEST", details))

        yield* bad({}, [{ code: "REQUIRED", path: "/kind" }, { code: "REQUIRED", path: "/values" }])
        yield* bad({ kind: "service", values: {} }, [{ code: "INVALID_VALUE", path: "/kind" }])
        yield* bad({ kind: "agent", values: [] }, [{ code: "INVALID_TYPE", path: "/values" }])
        yield* bad({ kind: "agent", values: null }, [{ code: "INVALID_TYPE", path: "/values" }])
        yield* bad({ kind: "agent", values: "x" }, [{ code: "INVALID_TYPE", path: "/values" }])
        yield* bad({ kind: "agent", values: {}, extra: 1 }, [{ code: "UNKNOWN_FIELD", path: "/extra" }])
        // 1e999 parses to Infinity: not JSON-safe.
        expectError(yield* post('{"kind":"agent","values":{"a":{"b":[1,1e999]}}}'), 400, "INVALID_REQUEST", [
          { code: "INVALID_VALUE", path: "/values/a/b/1" }
        ])
        // NUL is refused in every request string before any schema, as a format error (request-boundary.test.ts).
        yield* bad({ kind: "agent", values: { a: "x\u0000y" } }, [{ code: "INVALID_FORMAT", path: "/values/a" }])
        yield* bad({ kind: "agent", values: { a: ["\ud800"] } }, [{ code: "INVALID_VALUE", path: "/values/a/0" }])
        yield* bad({ kind: "agent", values: { "k\u0000": 1 } }, [{ code: "INVALID_FORMAT", path: "/values/k\u0000" }])
        let deep: unknown = 1
        for (let i = 0; i < Limits.jsonDepth + 2; i++) deep = { d: deep }
        expectError(yield* post({ kind: "agent", values: deep }), 400, "INVALID_REQUEST", [
          { code: "TOO_DEEP", path: `/values${"/d".repeat(Limits.jsonDepth - 1)}` }
        ])

        // Bindings: shape of names and values.
        yield* bad({ kind: "agent", values: {}, secretBindings: { "1ABC": binding(ns, secret.id) } }, [{ code: "INVALID_FORMAT", path: "/secretBindings/1ABC" }])
        yield* bad({ kind: "agent", values: {}, secretBindings: { "A-B": binding(ns, secret.id) } }, [{ code: "INVALID_FORMAT", path: "/secretBindings/A-B" }])
        const long = `A${"B".repeat(128)}`
        yield* bad({ kind: "agent", values: {}, secretBindings: { [long]: binding(ns, secret.id) } }, [{ code: "TOO_LONG", path: `/secretBindings/${long}` }])
        yield* bad({ kind: "agent", values: {}, secretBindings: { OK: { source: { kind: "file", namespaceId: ns, id: secret.id } } } }, [
          { code: "INVALID_VALUE", path: "/secretBindings/OK/source/kind" }
        ])
        yield* bad({ kind: "agent", values: {}, secretBindings: { OK: { source: { kind: "secret", namespaceId: ns, id: "sec_nope" } } } }, [
          { code: "INVALID_FORMAT", path: "/secretBindings/OK/source/id" }
        ])
        yield* bad({ kind: "agent", values: {}, secretBindings: { OK: { ...binding(ns, secret.id), delivery: { type: "file" } } } }, [
          { code: "INVALID_VALUE", path: "/secretBindings/OK/delivery/type" }
        ])
        yield* bad({ kind: "agent", values: {}, secretBindings: { OK: { ...binding(ns, secret.id), extra: 1 } } }, [
          { code: "UNKNOWN_FIELD", path: "/secretBindings/OK/extra" }
        ])
        yield* bad({ kind: "agent", values: {}, secretBindings: { OK: {} } }, [{ code: "REQUIRED", path: "/secretBindings/OK/source" }])
        yield* bad({ kind: "agent", values: {}, secretBindings: [] }, [{ code: "INVALID_TYPE", path: "/secretBindings" }])
        const many = Object.fromEntries(Array.from({ length: Limits.configurationSecretBindings + 1 }, (_, i) => [`VAR_${i}`, binding(ns, secret.id)]))
        yield* bad({ kind: "agent", values: {}, secretBindings: many }, [{ code: "TOO_LONG", path: "/secretBindings" }])

        expectError(yield* send(baseUrl, "GET", `/namespaces/${ns}/configurations/cfg_nope`, admin.headers), 400, "INVALID_REQUEST")
        expectError(yield* send(baseUrl, "GET", `/namespaces/${ns}/configurations/${SecretId.make()}`, admin.headers), 400, "INVALID_REQUEST")
        expect(yield* counts).toEqual(before)

        // Exactly 64 bindings is fine (one Secret may be delivered under several names).
        const max = Object.fromEntries(Array.from({ length: Limits.configurationSecretBindings }, (_, i) => [`VAR_${i}`, binding(ns, secret.id)]))
        const created = expectData(yield* post({ kind: "agent", values: {}, secretBindings: max }), 201)
        expect(Object.keys(created.secretBindings)).toHaveLength(64)
        expectError(yield* send(baseUrl, "PATCH", `/namespaces/${ns}/configurations/${created.id}`, admin.headers, {}), 400, "INVALID_REQUEST", [
          { code: "REQUIRED", path: "/values" }
        ])
        expectError(yield* send(baseUrl, "PATCH", `/namespaces/${ns}/configurations/${created.id}`, admin.headers, { values: {}, kind: "agent" }), 400, "INVALID_REQUEST", [
          { code: "UNKNOWN_FIELD", path: "/kind" }
        ])
      }))

    it.effect("values that name a host path or set a reserved variable are 400 INVALID_VALUE with pointers, on create and PATCH", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdmin("cfg-paths@example.com")
        const ns = yield* seedNamespace("cfg-paths")
        const before = yield* counts
        const post = (values: unknown) => send(baseUrl, "POST", `/namespaces/${ns}/configurations`, admin.headers, { kind: "agent", values })
        expectError(yield* post({
          plugins: { load: { paths: ["/srv/plugins"] } },
          logging: { file: "/var/log/x.log", level: "info" },
          agents: { defaults: { workspace: "/", repoRoot: "/srv" }, entries: { main: { agentDir: "/root", memory: { search: { extraPaths: ["/etc"] } } } } },
          skills: { load: { extraDirs: ["/opt"] } },
          session: { store: "/tmp/sessions.json" },
          channels: { telegram: { tokenFile: "/run/secrets/t" } },
          // OpenClaw also sets each string directly under `env` (beside `vars`), and trims every name.
          env: { vars: { OPENCLAW_CONFIG_READONLY: "0", GREETING: "hi", " NODE_OPTIONS\t": "-r x" }, https_proxy: "http://proxy.example:3128", GREETING: "hi" }
        }), 400, "INVALID_REQUEST", [
          { code: "INVALID_VALUE", path: "/values/plugins/load/paths" },
          { code: "INVALID_VALUE", path: "/values/logging/file" },
          { code: "INVALID_VALUE", path: "/values/agents/defaults/workspace" },
          { code: "INVALID_VALUE", path: "/values/agents/defaults/repoRoot" },
          { code: "INVALID_VALUE", path: "/values/agents/entries/main/agentDir" },
          { code: "INVALID_VALUE", path: "/values/agents/entries/main/memory/search/extraPaths" },
          { code: "INVALID_VALUE", path: "/values/skills/load/extraDirs" },
          { code: "INVALID_VALUE", path: "/values/session/store" },
          { code: "INVALID_VALUE", path: "/values/channels/telegram/tokenFile" },
          { code: "INVALID_VALUE", path: "/values/env/vars/OPENCLAW_CONFIG_READONLY" },
          { code: "INVALID_VALUE", path: "/values/env/vars/ NODE_OPTIONS\t" },
          { code: "INVALID_VALUE", path: "/values/env/https_proxy" }
        ])
        expect(yield* counts).toEqual(before)

        // HTTP route paths, URL roots, settings objects and ordinary variables are not host paths.
        const fine = {
          channels: { slack: { webhookPath: "/slack/events" }, telegram: { apiRoot: "https://api.telegram.org" } },
          hooks: { path: "/hooks", mappings: [{ match: { path: "gmail" } }] },
          memory: { search: { store: { vector: { enabled: true } } } },
          tools: { fs: { workspaceOnly: true } },
          env: { vars: { GREETING: "hi" }, GREETING: "hi" }
        }
        const created = expectData(yield* post(fine), 201)
        expectError(
          yield* send(baseUrl, "PATCH", `/namespaces/${ns}/configurations/${created.id}`, admin.headers, { values: { ...fine, plugins: { load: { paths: ["/srv"] } } } }),
          400,
          "INVALID_REQUEST",
          [{ code: "INVALID_VALUE", path: "/values/plugins/load/paths" }]
        )
      }))

    it.effect("every reserved destination is refused, in either case, on create and on PATCH", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdmin("cfg-reserved@example.com")
        const ns = yield* seedNamespace("cfg-reserved")
        const secret = expectData(yield* send(baseUrl, "POST", `/namespaces/${ns}/secrets`, admin.headers, { name: "k", value: "v" }), 201)
        const created = expectData(yield* send(baseUrl, "POST", `/namespaces/${ns}/configurations`, admin.headers, { kind: "agent", values: {} }), 201)
        const names = [
          ...ReservedEnvironmentNames,
          ...ReservedEnvironmentNames.map((name) => name.toLowerCase()),
          ...ReservedEnvironmentPrefixes.map((prefix) => `${prefix}ANYTHING`),
          ...ReservedEnvironmentPrefixes.map((prefix) => `${prefix.toLowerCase()}x`)
        ]
        // The list written down in the decision record, spot-checked so a shrinking list fails.
        for (const name of ["PATH", "HOME", "HTTPS_PROXY", "https_proxy", "NO_PROXY", "LD_PRELOAD", "NODE_OPTIONS", "SVC_AUTH_SECRET", "OPENCLAW_GATEWAY_TOKEN", "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GIT_SSH_COMMAND", "AWS_SECRET_ACCESS_KEY"]) {
          expect(reservedEnvironmentName(name), name).toBeDefined()
        }
        for (const name of names) {
          const body = { kind: "agent", values: {}, secretBindings: { [name]: binding(ns, secret.id) } }
          expectError(yield* send(baseUrl, "POST", `/namespaces/${ns}/configurations`, admin.headers, body), 400, "INVALID_REQUEST", [
            { code: "INVALID_VALUE", path: `/secretBindings/${name}` }
          ])
          expectError(
            yield* send(baseUrl, "PATCH", `/namespaces/${ns}/configurations/${created.id}`, admin.headers, { values: {}, secretBindings: { [name]: binding(ns, secret.id) } }),
            400,
            "INVALID_REQUEST",
            [{ code: "INVALID_VALUE", path: `/secretBindings/${name}` }]
          )
        }
        // Near misses are ordinary names.
        const fine = expectData(yield* send(baseUrl, "POST", `/namespaces/${ns}/configurations`, admin.headers, {
          kind: "agent",
          values: {},
          secretBindings: { SEARCH_KEY: binding(ns, secret.id), MY_PATH: binding(ns, secret.id), _PRIVATE: binding(ns, secret.id), HOMEPAGE_TOKEN: binding(ns, secret.id) }
        }), 201)
        expect(Object.keys(fine.secretBindings).sort()).toEqual(["HOMEPAGE_TOKEN", "MY_PATH", "SEARCH_KEY", "_PRIVATE"])
        expect(expectData(yield* send(baseUrl, "GET", `/namespaces/${ns}/configurations/${created.id}`, admin.headers), 200).generation).toBe(1)
      }))

    it.effect("bound Secrets need the caller's exact operate; foreign or absent Secrets are 404; nothing is written", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdmin("cfg-operate@example.com")
        const ns = yield* seedNamespace("cfg-operate")
        const other = yield* seedNamespace("cfg-operate-other")
        const mine = expectData(yield* send(baseUrl, "POST", `/namespaces/${ns}/secrets`, admin.headers, { name: "mine", value: "v" }), 201)
        const theirs = expectData(yield* send(baseUrl, "POST", `/namespaces/${other}/secrets`, admin.headers, { name: "theirs", value: "v" }), 201)
        const writer = ["namespace:read", "configuration:create", "configuration:read", "configuration:update"]
        const blind = yield* keyWith(ns, writer)
        const reader = yield* keyWith(ns, writer, { id: mine.id, permissions: ["secret:read"] })
        const operator = yield* keyWith(ns, writer, { id: mine.id, permissions: ["secret:read", "secret:operate"] })
        const before = yield* counts
        const post = (headers: Headers, body: unknown) => send(baseUrl, "POST", `/namespaces/${ns}/configurations`, headers, body)
        const bound = (id: string, namespaceId = ns) => ({ kind: "agent", values: {}, secretBindings: { KEY: binding(namespaceId, id) } })

        expectError(yield* post(blind.headers, bound(mine.id)), 404, "NOT_FOUND")
        expectError(yield* post(reader.headers, bound(mine.id)), 403, "FORBIDDEN")
        // Another Namespace's Secret is not found here, whoever asks and whether or not it exists.
        expectError(yield* post(admin.headers, bound(theirs.id, other)), 404, "NOT_FOUND")
        expectError(yield* post(admin.headers, bound(SecretId.make(), other)), 404, "NOT_FOUND")
        expectError(yield* post(admin.headers, bound(theirs.id)), 404, "NOT_FOUND")
        expectError(yield* post(admin.headers, bound(SecretId.make())), 404, "NOT_FOUND")
        expect(yield* counts).toEqual(before)

        const created = expectData(yield* post(operator.headers, bound(mine.id)), 201)
        const path = `/namespaces/${ns}/configurations/${created.id}`
        // PATCH needs operate on bindings it keeps, too: the values steer what the runtime does with them.
        expectError(yield* send(baseUrl, "PATCH", path, reader.headers, { values: { x: 1 } }), 403, "FORBIDDEN")
        expectError(yield* send(baseUrl, "PATCH", path, blind.headers, { values: { x: 1 } }), 404, "NOT_FOUND")
        expect(expectData(yield* send(baseUrl, "PATCH", path, reader.headers, { values: { x: 1 }, secretBindings: {} }), 200).generation).toBe(2)
        expectError(yield* send(baseUrl, "PATCH", path, reader.headers, { values: {}, secretBindings: { KEY: binding(ns, mine.id) } }), 403, "FORBIDDEN")
        expectError(yield* send(baseUrl, "PATCH", path, admin.headers, { values: {}, secretBindings: { KEY: binding(other, theirs.id) } }), 404, "NOT_FOUND")
        expect(expectData(yield* send(baseUrl, "GET", path, admin.headers), 200)).toEqual(expect.objectContaining({ generation: 2, values: { x: 1 }, secretBindings: {} }))
        // Without configuration:delete, a reader of the Configuration is refused with 403.
        expectError(yield* send(baseUrl, "DELETE", path, reader.headers), 403, "FORBIDDEN")
      }))

    it.effect("Namespace states: deleting refuses writes, external provisioning is NAMESPACE_NOT_READY, a Configuration blocks Namespace deletion", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdmin("cfg-states@example.com")
        const sql = yield* SqlClient.SqlClient
        const post = (namespaceId: string) => send(baseUrl, "POST", `/namespaces/${namespaceId}/configurations`, admin.headers, { kind: "agent", values: {} })

        const external = yield* seedNamespace("cfg-external")
        yield* sql`UPDATE namespaces SET status = 'provisioning', existing_namespace = 'prepared-by-operator' WHERE id = ${external}`
        expectError(yield* post(external), 409, "NAMESPACE_NOT_READY")
        yield* sql`UPDATE namespaces SET status = 'ready' WHERE id = ${external}`
        expectData(yield* post(external), 201)

        const provisioning = yield* seedNamespace("cfg-provisioning")
        yield* sql`UPDATE namespaces SET status = 'provisioning' WHERE id = ${provisioning}`
        expectData(yield* post(provisioning), 201)

        const full = yield* seedNamespace("cfg-full")
        const created = expectData(yield* post(full), 201)
        expectError(yield* send(baseUrl, "DELETE", `/namespaces/${full}`, admin.headers), 409, "NAMESPACE_NOT_EMPTY")
        expect((yield* send(baseUrl, "DELETE", `/namespaces/${full}/configurations/${created.id}`, admin.headers)).status).toBe(204)
        expect(expectData(yield* send(baseUrl, "DELETE", `/namespaces/${full}`, admin.headers), 202).status).toBe("deleting")
        // Being deleted: writes are refused, so nothing outlives the Namespace.
        expectError(yield* post(full), 409, "RESOURCE_CONFLICT")
        expectError(yield* send(baseUrl, "POST", `/namespaces/${full}/secrets`, admin.headers, { name: "late", value: "v" }), 409, "RESOURCE_CONFLICT")
        yield* sql`UPDATE namespaces SET status = 'deleted' WHERE id = ${full}`
        expectError(yield* post(full), 404, "NOT_FOUND")
        expectError(yield* send(baseUrl, "GET", `/namespaces/${full}/configurations`, admin.headers), 404, "NOT_FOUND")
        expectError(yield* send(baseUrl, "GET", `/namespaces/${full}/configurations/${created.id}`, admin.headers), 404, "NOT_FOUND")
        expectError(yield* post(NamespaceId.make()), 404, "NOT_FOUND")
        expectError(yield* send(baseUrl, "GET", `/namespaces/${external}/configurations/${ConfigurationId.make()}`, admin.headers), 404, "NOT_FOUND")
      }))

    it.effect("the generation stops at 2^53 - 1 with 409 and the Configuration unchanged", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdmin("cfg-generation@example.com")
        const ns = yield* seedNamespace("cfg-generation")
        const created = expectData(yield* send(baseUrl, "POST", `/namespaces/${ns}/configurations`, admin.headers, { kind: "agent", values: { v: 1 } }), 201)
        const path = `/namespaces/${ns}/configurations/${created.id}`
        const sql = yield* SqlClient.SqlClient
        yield* sql`UPDATE configurations SET generation = ${Limits.configurationGeneration - 1} WHERE id = ${created.id}`
        const last = expectData(yield* send(baseUrl, "PATCH", path, admin.headers, { values: { v: 2 } }), 200)
        expect(last.generation).toBe(Limits.configurationGeneration)
        expectError(yield* send(baseUrl, "PATCH", path, admin.headers, { values: { v: 3 } }), 409, "RESOURCE_CONFLICT")
        expect(expectData(yield* send(baseUrl, "GET", path, admin.headers), 200)).toEqual(last)
      }))

    it.effect("a Namespace viewer reads and lists but cannot write; an outsider sees nothing", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdmin("cfg-viewer@example.com")
        const ns = yield* seedNamespace("cfg-viewer")
        const created = expectData(yield* send(baseUrl, "POST", `/namespaces/${ns}/configurations`, admin.headers, { kind: "agent", values: {} }), 201)
        const viewerPrincipal = yield* createServicePrincipal("cfg-viewer", ns)
        yield* bindRole(viewerPrincipal, BuiltinRoles.namespaceViewer.id, { kind: "namespace", id: ns })
        const viewer = withKey((yield* insertServiceKey(viewerPrincipal, { namespaceId: ns })).key)
        const path = `/namespaces/${ns}/configurations/${created.id}`
        expect(expectData(yield* send(baseUrl, "GET", path, viewer), 200)).toEqual(created)
        expect(expectData(yield* send(baseUrl, "GET", `/namespaces/${ns}/configurations`, viewer), 200)).toEqual([created])
        expectError(yield* send(baseUrl, "PATCH", path, viewer, { values: {} }), 403, "FORBIDDEN")
        expectError(yield* send(baseUrl, "DELETE", path, viewer), 403, "FORBIDDEN")
        expectError(yield* send(baseUrl, "POST", `/namespaces/${ns}/configurations`, viewer, { kind: "agent", values: {} }), 403, "FORBIDDEN")
        const outsider = yield* createServicePrincipal("cfg-outsider", ns)
        const outsiderKey = withKey((yield* insertServiceKey(outsider, { namespaceId: ns })).key)
        expectError(yield* send(baseUrl, "GET", path, outsiderKey), 404, "NOT_FOUND")
        expectError(yield* send(baseUrl, "GET", `/namespaces/${ns}/configurations`, outsiderKey), 404, "NOT_FOUND")
      }))
  })
})
