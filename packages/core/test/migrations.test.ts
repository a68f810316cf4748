import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Migrations } from "@svc/core/db"
import { Effect } from "effect"
import { migratedDatabaseLayer } from "../../../testing/database.js"

describe("migrations", () => {
  it.layer(migratedDatabaseLayer, { timeout: 60_000 })((it) => {
    it.effect("are applied once and report current", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        expect(yield* Migrations.isCurrent).toBe(true)
        // A second run applies nothing and leaves the table as it was.
        const again = yield* Migrations.run
        expect(again).toEqual([])
        const rows = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM svc_migrations`
        expect(rows[0]!.n).toBe(Object.keys((yield* Effect.promise(() => import("../src/db/migrations/index.js"))).migrations).length)
      }))
  })
})
