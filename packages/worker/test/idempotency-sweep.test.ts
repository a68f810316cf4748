/**
 * The worker's sweep of expired idempotency keys (DESIGN §18): at start it deletes every key
 * past `expires_at` and keeps the live ones, in-flight reservations included.
 */
import { describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import { migratedDatabaseLayer } from "../../../testing/database.js"
import { IdempotencySweepLive } from "../src/index.js"

const keys = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  Effect.map(sql<{ key: string }>`SELECT key FROM idempotency_keys ORDER BY key`, (rows) => rows.map((row) => row.key)))

describe("the idempotency key sweep", () => {
  it.layer(migratedDatabaseLayer, { timeout: 60_000 })((it) => {
    it.effect("deletes the expired keys when the worker starts, and only those", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const row = (key: string, expires: string, status: number | null) => sql`
          INSERT INTO idempotency_keys (principal_id, key, method, path, body_digest, status, expires_at)
          VALUES ('sp_sweep', ${key}, 'POST', '/namespaces', 'digest', ${status}, now() + ${expires}::interval)
        `
        yield* row("expired", "-1 second", 201)
        yield* row("expired-in-flight", "-1 hour", null)
        yield* row("live", "1 hour", 201)
        yield* row("live-in-flight", "23 hours", null)
        yield* Effect.scoped(
          Effect.gen(function* () {
            yield* Layer.buildWithScope(IdempotencySweepLive("1 hour"), yield* Effect.scope)
            const deadline = Date.now() + 20_000
            while ((yield* keys).length > 2 && Date.now() < deadline) {
              yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 50)))
            }
          })
        )
        expect(yield* keys).toEqual(["live", "live-in-flight"])
      }))
  })
})
