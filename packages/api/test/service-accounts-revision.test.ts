/**
 * SPEC 2.6: a revision freezes the service-account ID, the credential kind, a native account's
 * Secret reference and `backendId`, never credential bytes; the revision read shows them, and a
 * rollback (DESIGN §18) freezes the account's credential as it is then.
 */
import { describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { ServiceAccountId } from "@svc/core/schema"
import { Effect } from "effect"
import { TestServer } from "../../../testing/server.js"
import { expectData, type Headers, seedAdmin, send } from "./support/iamServer.js"
import { accountsPath, binding, dedicated, managedApiLayer, world } from "./support/serviceAccountWorld.js"

const deploy = (baseUrl: string, headers: Headers, ns: string, agentId: string) =>
  send(baseUrl, "POST", `/namespaces/${ns}/agents/${agentId}/deploy`, headers)

describe("a revision freezes the service account's credential kind and Secret reference (SPEC 2.6)", () => {
  it.layer(managedApiLayer("kubernetes"), { timeout: 120_000 })((it) => {
    it.effect("a Backend-managed account: kind access_token, no Secret reference", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdmin("psa-freeze@example.com")
        const w = yield* world(baseUrl, admin.headers, "psa-freeze")
        const agent = expectData(yield* w.agents(admin.headers, dedicated(w.ready)), 201)
        const revision = expectData(yield* deploy(baseUrl, admin.headers, w.ns, agent.id), 202)
        const expected = { id: "openclaw", mode: "dedicated", auth: binding(w.ready), credential: { kind: "access_token" } }
        expect(revision.harness).toEqual(expected)
        expect(revision.backendId).toBe("accounts-main")
        const read = yield* send(baseUrl, "GET", `/namespaces/${w.ns}/agents/${agent.id}/revisions/${revision.id}`, admin.headers)
        expect(expectData(read, 200).harness).toEqual(expected)
        // No upstream or sealed-credential metadata.
        const sql = yield* SqlClient.SqlClient
        const [row] = yield* sql<{ credential_upstream_id: string }>`SELECT credential_upstream_id FROM service_accounts WHERE id = ${w.ready}`
        expect(read.text).not.toContain(row!.credential_upstream_id)
        expect(read.text).not.toContain("upstream")
        // A revision made before the credential was frozen reads without it.
        yield* sql`UPDATE agent_revisions SET snapshot = snapshot #- '{harness,credential}' WHERE id = ${revision.id}`
        const older = yield* send(baseUrl, "GET", `/namespaces/${w.ns}/agents/${agent.id}/revisions/${revision.id}`, admin.headers)
        expect(expectData(older, 200).harness).toEqual({ id: "openclaw", mode: "dedicated", auth: binding(w.ready) })
      }))

    it.effect("a native account: kind api_key and its Secret reference, kept by the revision when the account's changes; a rollback freezes the new one", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdmin("psa-freeze-native@example.com")
        const w = yield* world(baseUrl, admin.headers, "psa-freeze-native")
        const sql = yield* SqlClient.SqlClient
        const secret = (name: string, value: string) => send(baseUrl, "POST", `/namespaces/${w.ns}/secrets`, admin.headers, { name, value })
        const first = expectData(yield* secret("model-key", "sk-first-native-key"), 201)
        const second = expectData(yield* secret("model-key-2", "sk-second-native-key"), 201)
        // A native account (no Backend), as one made without a ServiceAccount Driver.
        const native = ServiceAccountId.make()
        yield* sql`INSERT INTO service_accounts (id, namespace_id, name, state) VALUES (${native}, ${w.ns}, 'native', 'ready')`
        const setReference = (name: string) =>
          send(baseUrl, "PATCH", `${accountsPath(w.ns)}/${native}/credential`, admin.headers, { kind: "api_key", secretRef: { name, key: "value" } })
        expectData(yield* setReference("model-key"), 200)

        const agent = expectData(yield* w.agents(admin.headers, { ...dedicated(native), backendId: null }), 201)
        const agentPath = `/namespaces/${w.ns}/agents/${agent.id}`
        const revision = expectData(yield* deploy(baseUrl, admin.headers, w.ns, agent.id), 202)
        const frozenFirst = {
          id: "openclaw",
          mode: "dedicated",
          auth: binding(native),
          credential: { kind: "api_key", secretRef: { id: first.id, key: "value" } }
        }
        expect(revision.harness).toEqual(frozenFirst)
        expect(revision.backendId).toBeNull()

        // The account's reference changes: the revision keeps what it froze.
        expectData(yield* setReference("model-key-2"), 200)
        const read = yield* send(baseUrl, "GET", `${agentPath}/revisions/${revision.id}`, admin.headers)
        expect(expectData(read, 200).harness).toEqual(frozenFirst)
        for (const value of ["sk-first-native-key", "sk-second-native-key"]) expect(read.text).not.toContain(value)

        // A new deploy, and a rollback to the first revision, freeze the account's current reference.
        const frozenSecond = { ...frozenFirst, credential: { kind: "api_key", secretRef: { id: second.id, key: "value" } } }
        yield* sql`UPDATE work_items SET state = 'succeeded', finished_at = now() WHERE key = ${revision.id}`
        const redeployed = expectData(yield* deploy(baseUrl, admin.headers, w.ns, agent.id), 202)
        expect(redeployed.harness).toEqual(frozenSecond)
        yield* sql`UPDATE work_items SET state = 'succeeded', finished_at = now() WHERE key = ${redeployed.id}`
        const rolledBack = expectData(yield* send(baseUrl, "POST", `${agentPath}/revisions/${revision.id}/redeploy`, admin.headers), 202)
        expect(rolledBack).toMatchObject({ rolledBackFrom: revision.id, harness: frozenSecond })
        const rolledBackRead = yield* send(baseUrl, "GET", `${agentPath}/revisions/${rolledBack.id}`, admin.headers)
        expect(expectData(rolledBackRead, 200).harness).toEqual(frozenSecond)
      }))
  })
})
