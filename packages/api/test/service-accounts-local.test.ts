import { describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { TestServer } from "../../../testing/server.js"
import { expectData, expectError, seedAdmin, send } from "./support/iamServer.js"
import { accountsPath, dedicated, managedApiLayer, world } from "./support/serviceAccountWorld.js"

describe("on the local Compute Driver, direct_token and provider_service_account stay refused (DESIGN §13)", () => {
  it.layer(managedApiLayer("local"), { timeout: 120_000 })((it) => {
    it.effect("409 RESOURCE_CONFLICT even with a ready account and an operable Secret; nothing is written", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdmin("psa-local@example.com")
        const w = yield* world(baseUrl, admin.headers, "psa-local")
        const secret = expectData(yield* send(baseUrl, "POST", `/namespaces/${w.ns}/secrets`, admin.headers, { name: "token", value: "t-1234" }), 201)
        const direct = { method: "direct_token", source: { kind: "secret", namespaceId: w.ns, id: secret.id } }
        for (const body of [dedicated(w.ready), { ...dedicated(w.ready), executionMode: "embedded" }, { harnessAuth: direct }, { executionMode: "dedicated", harnessAuth: direct }]) {
          expectError(yield* w.agents(admin.headers, body), 409, "RESOURCE_CONFLICT")
        }
        const sql = yield* SqlClient.SqlClient
        const [n] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM agents WHERE namespace_id = ${w.ns}`
        expect(n!.n).toBe(0)
        // Deleting the account is still possible: nothing references it.
        expect((yield* send(baseUrl, "DELETE", `${accountsPath(w.ns)}/${w.ready}`, admin.headers)).status).toBe(204)
      }))
  })
})
