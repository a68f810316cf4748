/**
 * The `installation` table: the one row bootstrap writes (SPEC 5.6). Its queries keep their
 * `SqlError`: the bootstrap initializer reports a database failure as its own reason, and the
 * API dies on it (503 when the database is lost).
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { pageQuery } from "../pageQuery.js"
import { InstallationId } from "../../schema/ids.js"

const IdRow = Schema.Struct({ id: InstallationId })

export class InstallationRepo extends Effect.Service<InstallationRepo>()("@svc/core/InstallationRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    const current = SqlSchema.findOne({
      Request: Schema.Void,
      Result: IdRow,
      execute: () => sql`SELECT id FROM installation`
    })

    /** None when an Installation already exists (the table holds a singleton). */
    const insert = SqlSchema.findOne({
      Request: InstallationId,
      Result: IdRow,
      execute: (id) => sql`
        INSERT INTO installation (id, bootstrapped_at) VALUES (${id}, now())
        ON CONFLICT (singleton) DO NOTHING RETURNING id
      `
    })

    return {
      /** `current` as a query, for a statement that also authorizes the read (`GatedPages`). */
      currentQuery: pageQuery(IdRow, sql`SELECT id FROM installation`),
      /** The Installation's id; None before bootstrap. */
      current: current(undefined).pipe(Effect.map(Option.map((row) => row.id))),
      insert: (id: InstallationId) => insert(id).pipe(Effect.map(Option.isSome))
    }
  })
}) {}
