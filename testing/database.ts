/**
 * A fresh database per test file on the run's PostgreSQL server, with migrations applied.
 */
import { Migrations, pgPoolLayer } from "@svc/core/db"
import { Effect, Layer, Redacted } from "effect"
import pg from "pg"
import * as crypto from "node:crypto"
import { inject } from "vitest"

const withDatabase = (database: string): string => {
  const url = new URL(inject("pgAdminUrl"))
  url.pathname = `/${database}`
  return url.toString()
}

const admin = async <A>(f: (client: pg.Client) => Promise<A>): Promise<A> => {
  const client = new pg.Client({ connectionString: inject("pgAdminUrl") })
  await client.connect()
  try {
    return await f(client)
  } finally {
    await client.end()
  }
}

/** Creates an empty database and returns its URL. */
export const createDatabase = async (): Promise<string> => {
  const name = `svc_test_${crypto.randomBytes(6).toString("hex")}`
  await admin((client) => client.query(`CREATE DATABASE ${client.escapeIdentifier(name)}`))
  return withDatabase(name)
}

export const dropDatabase = async (url: string): Promise<void> => {
  const name = decodeURIComponent(new URL(url).pathname.slice(1))
  await admin((client) => client.query(`DROP DATABASE IF EXISTS ${client.escapeIdentifier(name)} WITH (FORCE)`))
}

/** Runs SQL as the server's superuser against a database (for fault injection in tests). */
export const superuserQuery = (sql: string, params: ReadonlyArray<unknown> = []) =>
  admin((client) => client.query(sql, params as Array<unknown>))

export const pgClientLayer = (url: string) =>
  pgPoolLayer({ url: Redacted.make(url), maxConnections: 10 })

/** Creates a database with every migration applied and returns its URL (drop it with `dropDatabase`). */
export const createMigratedDatabase = async (): Promise<string> => {
  const url = await createDatabase()
  await Effect.runPromise(Effect.provide(Migrations.run, pgClientLayer(url)))
  return url
}

/** A migrated fresh database for one test file, dropped when the layer is released. */
export const TestDatabaseUrl = Effect.acquireRelease(
  Effect.promise(createDatabase),
  (url) => Effect.promise(() => dropDatabase(url))
)

export const migratedDatabaseLayer = Layer.unwrapScoped(
  Effect.map(TestDatabaseUrl, (url) => {
    const client = pgClientLayer(url)
    return Layer.provideMerge(Layer.effectDiscard(Migrations.run), client)
  })
)
