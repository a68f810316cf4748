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
        yield* row("b-deleting", "deleting", "0 seconds")
        yield* row("c-stale-registering", "registering", "1 hour")
        yield* row("d-fresh-registering", "registering", "0 seconds")

        // No Credential Gateway selected: nothing is touched.
        yield* runSweep(defaultInstallationConfig, () => false, 6)
        expect((yield* states).map((r) => r.state)).toEqual(["ready", "deleting", "registering", "registering"])

        yield* runSweep(withGateway, (rows) => rows.length === 2)
        expect(yield* states).toEqual([{ name: "a-ready", state: "ready" }, { name: "d-fresh-registering", state: "registering" }])
        expect(gateway.calls.filter((c) => c.method === "DeleteProvider")).toHaveLength(2)
        expect(gateway.providers.has(ready)).toBe(true)
        yield* Effect.promise(() => gateway.stop())
      }))
  })
})
