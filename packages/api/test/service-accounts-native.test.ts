import { describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { ServiceAccountId } from "@svc/core/schema"
import { Effect } from "effect"
import { bindRole, createAccount as createHuman, signedInSession } from "../../../testing/identity.js"
import { TestServer } from "../../../testing/server.js"
import { apiTestLayer, auditKinds, expectData, expectError, seedAdmin, seedNamespace, send, withSession } from "./support/iamServer.js"
import { accountsPath, createAccount, issue, roleWith } from "./support/serviceAccountWorld.js"

describe("native service accounts: no ServiceAccount Driver (SPEC 4.5)", () => {
  it.layer(apiTestLayer(), { timeout: 120_000 })((it) => {
    it.effect("create is native; issuance is 503 DEPENDENCY_UNAVAILABLE; an api_key reference makes it ready", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdmin("sa-native@example.com")
        const ns = yield* seedNamespace("sa-native")
        const account = expectData(yield* createAccount(baseUrl, admin.headers, ns, "native"), 201)
        expect(account).toMatchObject({ namespaceId: ns, name: "native", managed: false, state: "ready", credential: null })
        expectError(yield* issue(baseUrl, admin.headers, ns, account.id), 503, "DEPENDENCY_UNAVAILABLE")

        const secret = expectData(yield* send(baseUrl, "POST", `/namespaces/${ns}/secrets`, admin.headers, { name: "model-key", value: "sk-native-model-key" }), 201)
        const patch = (body: unknown) => send(baseUrl, "PATCH", `${accountsPath(ns)}/${account.id}/credential`, admin.headers, body)
        expectError(yield* patch({ kind: "api_key", secretRef: { name: "no-such-secret", key: "value" } }), 404, "NOT_FOUND")
        expectError(yield* patch({ kind: "api_key", secretRef: { name: "model-key", key: "token" } }), 404, "NOT_FOUND")
        expectError(yield* patch({ kind: "access_token", secretRef: { name: "model-key", key: "value" } }), 400, "INVALID_REQUEST", [
          { code: "INVALID_VALUE", path: "/kind" }
        ])
        expectError(yield* patch({ kind: "api_key", secretRef: { name: "model-key", key: "value", id: secret.id } }), 400, "INVALID_REQUEST", [
          { code: "UNKNOWN_FIELD", path: "/secretRef/id" }
        ])
        expectError(yield* patch({ kind: "api_key" }), 400, "INVALID_REQUEST", [{ code: "REQUIRED", path: "/secretRef" }])
        expect(expectData(yield* send(baseUrl, "GET", `${accountsPath(ns)}/${account.id}`, admin.headers), 200)).toEqual(account)

        const set = yield* patch({ kind: "api_key", secretRef: { name: "model-key", key: "value" } })
        expect(expectData(set, 200)).toEqual({ ...account, credential: { kind: "api_key", ready: true, issuedAt: expect.any(String) } })
        expect(set.text).not.toContain("sk-native-model-key")
        expectError(yield* issue(baseUrl, admin.headers, ns, account.id), 503, "DEPENDENCY_UNAVAILABLE")

        // The Secret and the Namespace cannot be deleted while the account uses or holds them.
        expectError(yield* send(baseUrl, "DELETE", `/namespaces/${ns}/secrets/${secret.id}`, admin.headers), 409, "RESOURCE_CONFLICT")
        expectError(yield* send(baseUrl, "DELETE", `/namespaces/${ns}`, admin.headers), 409, "NAMESPACE_NOT_EMPTY")
        expect((yield* send(baseUrl, "DELETE", `${accountsPath(ns)}/${account.id}`, admin.headers)).status).toBe(204)
        expect((yield* send(baseUrl, "DELETE", `/namespaces/${ns}/secrets/${secret.id}`, admin.headers)).status).toBe(204)
        expect((yield* auditKinds(account.id)).map((a) => a.kind)).toEqual([
          "service_account.created",
          "service_account.credential_set",
          "service_account.deleted"
        ])
        expectError(yield* send(baseUrl, "DELETE", `${accountsPath(ns)}/${account.id}`, admin.headers), 404, "NOT_FOUND")
      }))

    it.effect("list returns only accounts the caller can exactly read; each route needs its permission", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdmin("sa-list-admin@example.com")
        const ns = yield* seedNamespace("sa-list")
        const a = expectData(yield* createAccount(baseUrl, admin.headers, ns, "a"), 201)
        const b = expectData(yield* createAccount(baseUrl, admin.headers, ns, "b"), 201)
        expect(expectData(yield* send(baseUrl, "GET", accountsPath(ns), admin.headers), 200).map((x: { id: string }) => x.id))
          .toEqual([a.id, b.id].sort())

        const human = yield* createHuman("sa-list-reader@example.com")
        const reader = withSession((yield* signedInSession(human.userId)).token)
        // Without namespace:read the Namespace is hidden (404); with it and read on `a` only, the list shows `a`.
        expectError(yield* send(baseUrl, "GET", accountsPath(ns), reader), 404, "NOT_FOUND")
        yield* bindRole(human.principalId, yield* roleWith(ns, "namespace:read"), { kind: "namespace", id: ns })
        expect(expectData(yield* send(baseUrl, "GET", accountsPath(ns), reader), 200)).toEqual([])
        yield* bindRole(human.principalId, yield* roleWith(ns, "service_account:read"), { kind: "service_account", id: a.id, namespaceId: ns })
        expect(expectData(yield* send(baseUrl, "GET", accountsPath(ns), reader), 200)).toEqual([a])
        expect(expectData(yield* send(baseUrl, "GET", `${accountsPath(ns)}/${a.id}`, reader), 200)).toEqual(a)
        expectError(yield* send(baseUrl, "GET", `${accountsPath(ns)}/${b.id}`, reader), 404, "NOT_FOUND")
        expectError(yield* send(baseUrl, "DELETE", `${accountsPath(ns)}/${b.id}`, reader), 404, "NOT_FOUND")
        expectError(yield* createAccount(baseUrl, reader, ns, "c"), 403, "FORBIDDEN")
        expectError(yield* issue(baseUrl, reader, ns, a.id), 403, "FORBIDDEN")
        expectError(yield* send(baseUrl, "PATCH", `${accountsPath(ns)}/${a.id}/credential`, reader, { kind: "api_key", secretRef: { name: "k", key: "value" } }), 403, "FORBIDDEN")
        expectError(yield* send(baseUrl, "DELETE", `${accountsPath(ns)}/${a.id}`, reader), 403, "FORBIDDEN")

        // update on the account is not enough for a reference: the Secret needs operate too.
        yield* bindRole(human.principalId, yield* roleWith(ns, "service_account:update"), { kind: "service_account", id: a.id, namespaceId: ns })
        expectData(yield* send(baseUrl, "POST", `/namespaces/${ns}/secrets`, admin.headers, { name: "k", value: "v-123" }), 201)
        // (a Secret the caller cannot even read is hidden: 404; readable without operate: 403)
        expectError(yield* send(baseUrl, "PATCH", `${accountsPath(ns)}/${a.id}/credential`, reader, { kind: "api_key", secretRef: { name: "k", key: "value" } }), 404, "NOT_FOUND")
        yield* bindRole(human.principalId, yield* roleWith(ns, "secret:read"), { kind: "namespace", id: ns })
        expectError(yield* send(baseUrl, "PATCH", `${accountsPath(ns)}/${a.id}/credential`, reader, { kind: "api_key", secretRef: { name: "k", key: "value" } }), 403, "FORBIDDEN")
        const sql = yield* SqlClient.SqlClient
        const [row] = yield* sql<{ credential_kind: string | null }>`SELECT credential_kind FROM service_accounts WHERE id = ${a.id}`
        expect(row!.credential_kind).toBeNull()
      }))

    it.effect("a Backend-managed account left behind when the Driver is deselected: issuance and deletion answer 503 and change nothing", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdmin("sa-orphaned@example.com")
        const ns = yield* seedNamespace("sa-orphaned")
        const sql = yield* SqlClient.SqlClient
        const id = ServiceAccountId.make()
        yield* sql`
          INSERT INTO service_accounts (id, namespace_id, name, backend_id, upstream_name, upstream_account_id, state)
          VALUES (${id}, ${ns}, 'managed', 'accounts-main', ${`managed-${id}`}, 'vsa_1', 'ready')
        `
        const snapshot = sql<{ row: string }>`SELECT row_to_json(a)::text AS row FROM service_accounts a WHERE id = ${id}`
        const before = yield* snapshot
        expectError(yield* issue(baseUrl, admin.headers, ns, id), 503, "DEPENDENCY_UNAVAILABLE")
        expectError(yield* send(baseUrl, "DELETE", `${accountsPath(ns)}/${id}`, admin.headers), 503, "DEPENDENCY_UNAVAILABLE")
        expect(yield* snapshot).toEqual(before)
        expect(expectData(yield* send(baseUrl, "GET", `${accountsPath(ns)}/${id}`, admin.headers), 200)).toMatchObject({ managed: true, state: "ready" })
      }))

    it.effect("create works while provisioning, refuses a failed or deleting Namespace, and rejects bad names", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdmin("sa-states@example.com")
        const provisioning = yield* seedNamespace("sa-provisioning").pipe(Effect.tap(() => Effect.void))
        const sql = yield* SqlClient.SqlClient
        yield* sql`UPDATE namespaces SET status = 'provisioning' WHERE id = ${provisioning}`
        expectData(yield* createAccount(baseUrl, admin.headers, provisioning, "early"), 201)
        const failed = yield* seedNamespace("sa-failed")
        yield* sql`UPDATE namespaces SET status = 'failed' WHERE id = ${failed}`
        expectError(yield* createAccount(baseUrl, admin.headers, failed, "late"), 409, "RESOURCE_CONFLICT")
        const deleting = yield* seedNamespace("sa-deleting")
        yield* sql`UPDATE namespaces SET status = 'deleting' WHERE id = ${deleting}`
        expectError(yield* createAccount(baseUrl, admin.headers, deleting, "late"), 409, "RESOURCE_CONFLICT")
        const ns = yield* seedNamespace("sa-names")
        expectError(yield* createAccount(baseUrl, admin.headers, ns, " padded"), 400, "INVALID_REQUEST", [{ code: "INVALID_FORMAT", path: "/name" }])
        expectError(yield* createAccount(baseUrl, admin.headers, ns, "x".repeat(201)), 400, "INVALID_REQUEST", [{ code: "TOO_LONG", path: "/name" }])
        expectError(yield* send(baseUrl, "POST", accountsPath(ns), admin.headers, { name: "n", managed: true }), 400, "INVALID_REQUEST", [
          { code: "UNKNOWN_FIELD", path: "/managed" }
        ])
        // SPEC 4's `sa_<id>`: an id of that shape that is not ours names nothing (404); outside it, 400.
        expectError(yield* send(baseUrl, "POST", `${accountsPath(ns)}/sa_x/credentials`, admin.headers, {}), 404, "NOT_FOUND")
        expectError(yield* send(baseUrl, "POST", `${accountsPath(ns)}/acct_x/credentials`, admin.headers, {}), 400, "INVALID_REQUEST", [
          { code: "INVALID_FORMAT", path: "/serviceAccountId" }
        ])
        const [n] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM service_accounts WHERE namespace_id IN (${failed}, ${deleting}, ${ns})`
        expect(n!.n).toBe(0)
      }))
  })
})
