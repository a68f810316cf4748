/**
 * Credential sources in an Installation without a Credential Gateway (SPEC 4.6, 7.4 "503 when no
 * gateway is selected"): create is refused after its checks and records nothing; a source
 * recorded while a gateway was selected still reads (status `failed`, fixed reason) and lists;
 * DELETE answers 503 and leaves it `deleting` for when a gateway is selected again.
 */
import { describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { CredentialSourceId } from "@svc/core/schema"
import { Effect } from "effect"
import { TestServer } from "../../../testing/server.js"
import { sourceRows } from "./support/credentialGatewayWorld.js"
import { apiTestLayer, auditKinds, expectData, expectError, seedAdmin, seedNamespace, send } from "./support/iamServer.js"

describe("credential sources without a Credential Gateway", () => {
  it.layer(apiTestLayer(), { timeout: 120_000 })((it) => {
    it.effect("create is 503 DEPENDENCY_UNAVAILABLE and keeps nothing; a left-over source reads as failed; DELETE is 503", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdmin("cs-none@example.com")
        const ns = yield* seedNamespace("cs-none")
        const call = (method: string, path: string, body?: unknown) => send(baseUrl, method, `/namespaces/${ns}/${path}`, admin.headers, body)
        const secret = expectData(yield* call("POST", "secrets", { name: "vendor-key", value: "sk-none-0123456789" }), 201)
        const body = { name: "vendor", type: "modelvendor", secrets: { api_key: { kind: "secret", namespaceId: ns, id: secret.id } } }
        expectError(yield* call("POST", "credential-sources", body), 503, "DEPENDENCY_UNAVAILABLE")
        // The catalog is checked first: an unknown type is still 404.
        expectError(yield* call("POST", "credential-sources", { ...body, type: "othervendor" }), 404, "NOT_FOUND")
        expect(yield* sourceRows).toEqual([])

        const sql = yield* SqlClient.SqlClient
        const id = CredentialSourceId.make()
        yield* sql`INSERT INTO credential_sources (id, namespace_id, name, type, state) VALUES (${id}, ${ns}, 'left-over', 'modelvendor', 'ready')`
        const read = expectData(yield* call("GET", `credential-sources/${id}`), 200)
        expect([read.state, read.status]).toEqual(["ready", { state: "failed", reason: "No Credential Gateway is selected." }])
        expect(expectData(yield* call("GET", "credential-sources"), 200).map((s: { id: string; status?: unknown }) => [s.id, s.status])).toEqual([[id, undefined]])
        expectError(yield* call("DELETE", `credential-sources/${id}`), 503, "DEPENDENCY_UNAVAILABLE")
        expect(yield* sourceRows).toEqual([{ id, state: "deleting" }])
        expect((yield* auditKinds(id)).map((row) => row.kind)).toEqual(["credential_source.deleted"])
      }))
  })
})
