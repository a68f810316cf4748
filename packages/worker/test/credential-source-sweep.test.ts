/**
 * The worker's credential-source sweep as the worker runs it (SPEC 3): with a Credential Gateway
 * selected it removes `deleting` sources from the loopback gateway and then from the database,
 * times out an old `registering` one, and leaves `ready` ones alone; without a gateway it does
 * nothing.
 */
import { describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { decodeInstallationConfig, defaultInstallationConfig, type InstallationConfig, InstallationConfiguration } from "@svc/core/config"
import { CredentialSourceId } from "@svc/core/schema"
import { Effect, Either, Layer } from "effect"
import { startCredentialGateway } from "../../../testing/credentialGateway.js"
import { createNamespaceRow } from "../../../testing/identity.js"
import { migratedDatabaseLayer } from "../../../testing/database.js"
import { CredentialSourceSweepLive } from "../src/index.js"

const gateway = await startCredentialGateway()
const decoded = decodeInstallationConfig("/test", {
  drivers: { sandbox: { id: "gw" }, credentialGateway: { id: "gw" } },
  backends: [{
    id: "sandbox",
    type: "sandbox_gateway",
    configuration: { endpoint: gateway.endpoint, auth: { mode: "unauthenticated" }, requestTimeoutMs: 1000, insecureTransport: "network-policy" },
    drivers: { sandbox: "gw", credentialGateway: "gw" }
  }]
})
if (Either.isLeft(decoded)) throw decoded.left
const withGateway = decoded.right

const states = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql<{ name: string; state: string }>`SELECT name, state FROM credential_sources ORDER BY name`)

/** Runs the sweep layer until `done` holds or `polls` real 50 ms polls have passed (it.effect's clock is a TestClock). */
const runSweep = (installation: InstallationConfig, done: (rows: ReadonlyArray<{ state: string }>) => boolean, polls = 400) =>
  Effect.scoped(
    Effect.gen(function* () {
      const layer = CredentialSourceSweepLive("50 millis").pipe(Layer.provide(Layer.succeed(InstallationConfiguration, installation)))
      yield* Layer.buildWithScope(layer, yield* Effect.scope)
      for (let i = 0; i < polls && !done(yield* states); i++) {
        yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 50)))
      }
    })
  )

describe("the credential-source sweep", () => {
  it.layer(migratedDatabaseLayer, { timeout: 60_000 })((it) => {
    it.effect("removes deleting and timed-out registering sources from the gateway, then here; ready ones stay", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const ns = yield* createNamespaceRow("sweep")
        const row = (name: string, state: string, age: string) =>
          Effect.gen(function* () {
            const id = CredentialSourceId.make()
            yield* sql`INSERT INTO credential_sources (id, namespace_id, name, type, state, state_changed_at)
              VALUES (${id}, ${ns}, ${name}, 'modelvendor', ${state}, now() - ${age}::interval)`
            gateway.providers.set(id, { name: id, type: "modelvendor", labels: {}, config: {}, credentials: {} })
            return id
          })
        const ready = yield* row("a-ready", "ready", "1 hour")
        const deleting = yield* row("b-deleting", "deleting", "0 seconds")
        // Policy on a source goes with its row (docs/decisions/iam.md); policy on a kept one stays.
        const principal = `prn_${crypto.randomUUID()}`
        const role = `role_${crypto.randomUUID()}`
        yield* sql`INSERT INTO principals (id, kind, name) VALUES (${principal}, 'human', 'policy holder')`
        yield* sql`INSERT INTO roles (id, namespace_id, name, permissions) VALUES (${role}, ${ns}, 'reader', ${["credential_source:read"]})`
        for (const source of [ready, deleting]) {
          yield* sql`INSERT INTO access_bindings (id, principal_id, role_id, resource_kind, resource_id, namespace_id)
            VALUES (${`bnd_${crypto.randomUUID()}`}, ${principal}, ${role}, 'credential_source', ${source}, ${ns})`
          yield* sql`INSERT INTO restrictions (id, principal_id, permission, resource_kind, resource_id)
            VALUES (${`rst_${crypto.randomUUID()}`}, ${principal}, '*', 'credential_source', ${source})`
        }
        const policyOn = (source: string) =>
          sql<{ n: number }>`
            SELECT (SELECT count(*)::int FROM access_bindings WHERE resource_kind = 'credential_source' AND resource_id = ${source})
              + (SELECT count(*)::int FROM restrictions WHERE resource_kind = 'credential_source' AND resource_id = ${source}) AS n
          `.pipe(Effect.map((rows) => rows[0]!.n))
        yield* row("c-stale-registering", "registering", "1 hour")
        yield* row("d-fresh-registering", "registering", "0 seconds")

        // No Credential Gateway selected: nothing is touched.
        yield* runSweep(defaultInstallationConfig, () => false, 6)
        expect((yield* states).map((r) => r.state)).toEqual(["ready", "deleting", "registering", "registering"])

        yield* runSweep(withGateway, (rows) => rows.length === 2)
        expect(yield* states).toEqual([{ name: "a-ready", state: "ready" }, { name: "d-fresh-registering", state: "registering" }])
        expect(gateway.calls.filter((c) => c.method === "DeleteProvider")).toHaveLength(2)
        expect(gateway.providers.has(ready)).toBe(true)
        expect(yield* policyOn(deleting)).toBe(0)
        expect(yield* policyOn(ready)).toBe(2)
        yield* Effect.promise(() => gateway.stop())
      }))
  })
})
