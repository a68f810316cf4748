/**
 * `POST /installation/bootstrap` (SPEC 4.2: "not in production serving paths"; development and
 * bootstrap flows only). Bootstrap needs a human session (SPEC 5.5.4, 7.2: 401 for a key); the
 * initializer has made the Installation before the server runs (SPEC 5.6.1), so an administrator
 * is told it exists (409 INSTALLATION_EXISTS) and nothing changes. Production:
 * installation-bootstrap-production.test.ts (a server of its own).
 */
import { describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { InstallationId } from "@svc/core/schema"
import { Effect } from "effect"
import { TestServer } from "../../../testing/server.js"
import { anonymous, apiTestLayer, expectError, seedAdmin, seedHuman, seedServiceKey, send } from "./support/iamServer.js"
import { bindRole } from "../../../testing/identity.js"
import { BuiltinRoles } from "@svc/core/iam"

/** What bootstrap would change: the Installation row and the identities. */
const state = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const [row] = yield* sql<{ installations: string; principals: string; keys: string }>`
    SELECT (SELECT count(*) FROM installation) AS installations,
           (SELECT count(*) FROM principals) AS principals,
           (SELECT count(*) FROM service_keys) AS keys`
  return row
})

describe("POST /installation/bootstrap on a development server", () => {
  it.layer(apiTestLayer(), { timeout: 120_000 })((it) => {
    it.effect("an administrator's session: 409 INSTALLATION_EXISTS, nothing changes", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const sql = yield* SqlClient.SqlClient
        yield* sql`INSERT INTO installation (id, bootstrapped_at) VALUES (${InstallationId.make()}, now())`
        const admin = yield* seedAdmin("bootstrap-admin@example.com")
        const before = yield* state
        expectError(yield* send(baseUrl, "POST", "/installation/bootstrap", admin.headers), 409, "INSTALLATION_EXISTS")
        expect(yield* state).toEqual(before)
      }))

    it.effect("a service key, even an Installation administrator's, is 401; no credential 401; a session without administer 403", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const key = yield* seedServiceKey("bootstrap-key")
        yield* bindRole(key.principalId, BuiltinRoles.installationAdmin.id, { kind: "installation" })
        const nobody = yield* seedHuman("bootstrap-nobody@example.com")
        const before = yield* state
        expectError(yield* send(baseUrl, "POST", "/installation/bootstrap", key.headers), 401, "UNAUTHENTICATED")
        expectError(yield* send(baseUrl, "POST", "/installation/bootstrap", anonymous), 401, "UNAUTHENTICATED")
        expectError(yield* send(baseUrl, "POST", "/installation/bootstrap", nobody.headers), 403, "FORBIDDEN")
        expect(yield* state).toEqual(before)
      }))

    it.effect("other methods are 405 with Allow: POST", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdmin("bootstrap-get@example.com")
        const result = yield* send(baseUrl, "GET", "/installation/bootstrap", admin.headers)
        expectError(result, 405, "METHOD_NOT_ALLOWED")
        expect(result.headers.get("allow")).toBe("POST")
      }))
  })
})
