/**
 * `queryNamed` and `runNamed`: request-path statements sent as named prepared statements on the
 * process pool (the credential lookup and the list pages).
 */
import { SqlClient } from "@effect/sql"
import { SqlError } from "@effect/sql/SqlError"
import { describe, expect, it } from "@effect/vitest"
import { PgPool, pgPoolLayer, queryNamed, runNamed } from "@svc/core/db"
import { Effect, Either, Layer, Redacted } from "effect"
import { TestDatabaseUrl } from "../../../testing/database.js"

/** One connection: whatever is prepared is prepared on the backend the test reads. */
const onePool = Layer.unwrapScoped(
  Effect.map(TestDatabaseUrl, (url) => pgPoolLayer({ url: Redacted.make(url), maxConnections: 1 }))
)

const prepared = Effect.flatMap(
  SqlClient.SqlClient,
  (sql) => sql<{ readonly name: string; readonly statement: string }>`SELECT name, statement FROM pg_prepared_statements ORDER BY name`
)

describe("named statements", () => {
  it.scoped("a text is prepared once under a name taken from it, and reused with new values", () =>
    Effect.gen(function* () {
      const pool = yield* PgPool
      const text = "SELECT $1::int + 1 AS n"
      expect(yield* queryNamed(pool, text, [1])).toEqual([{ n: 2 }])
      expect(yield* queryNamed(pool, text, [41])).toEqual([{ n: 42 }])
      const statements = yield* prepared
      expect(statements).toEqual([{ name: expect.stringMatching(/^svc_[0-9a-f]{24}$/), statement: text }])
      // Another text, another name.
      yield* queryNamed(pool, "SELECT $1::int - 1 AS n", [1])
      expect((yield* prepared).map((s) => s.statement).sort()).toEqual(["SELECT $1::int + 1 AS n", "SELECT $1::int - 1 AS n"])
    }).pipe(Effect.provide(onePool)))

  it.scoped("a statement whose result type a migration changed is answered unnamed, with the new columns", () =>
    Effect.gen(function* () {
      const pool = yield* PgPool
      const sql = yield* SqlClient.SqlClient
      yield* sql`CREATE TABLE svc_test_widened (id int PRIMARY KEY)`
      yield* sql`INSERT INTO svc_test_widened VALUES (1)`
      const text = "SELECT * FROM svc_test_widened WHERE id = $1"
      expect(yield* queryNamed(pool, text, [1])).toEqual([{ id: 1 }])
      yield* sql`ALTER TABLE svc_test_widened ADD COLUMN label text NOT NULL DEFAULT 'new'`
      // Sent named again, PostgreSQL refuses it on this connection; the unnamed retry answers.
      expect(yield* queryNamed(pool, text, [1])).toEqual([{ id: 1, label: "new" }])
    }).pipe(Effect.provide(onePool)))

  it.scoped("other errors are SqlError with the driver's error as the cause, not retried", () =>
    Effect.gen(function* () {
      const pool = yield* PgPool
      const result = yield* Effect.either(queryNamed(pool, "SELECT 10 / $1::int AS q", [0]))
      expect(Either.isLeft(result)).toBe(true)
      const error = Either.isLeft(result) ? result.left : null
      expect(error).toBeInstanceOf(SqlError)
      expect(error?.message).toBe("Failed to execute statement")
      expect((error?.cause as { code?: string }).code).toBe("22012")
    }).pipe(Effect.provide(onePool)))

  it.scoped("runNamed sends a built statement named, but inside a transaction on the transaction's connection", () =>
    Effect.gen(function* () {
      const pool = yield* PgPool
      const sql = yield* SqlClient.SqlClient
      yield* sql`CREATE TABLE svc_test_tx (id int PRIMARY KEY)`
      expect(yield* runNamed(pool, sql<{ n: number }>`SELECT count(*)::int AS n FROM svc_test_tx WHERE id > ${0}`)).toEqual([{ n: 0 }])
      expect((yield* prepared).length).toBe(1)
      // The pool's only connection is the transaction's: a named call on the pool would wait for it
      // forever; runNamed reads on the transaction's connection and sees its uncommitted row.
      const inside = yield* sql.withTransaction(
        Effect.zipRight(
          sql`INSERT INTO svc_test_tx VALUES (1)`,
          runNamed(pool, sql<{ n: number }>`SELECT count(*)::int AS n FROM svc_test_tx WHERE id > ${0}`)
        )
      )
      expect(inside).toEqual([{ n: 1 }])
    }).pipe(Effect.provide(onePool)))
})
