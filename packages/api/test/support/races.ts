/**
 * Helpers for the concurrency tests: fire the same request many times at once over real HTTP
 * and check the outcome set exactly. Each race is repeated a few rounds because one round may
 * happen not to interleave.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { expect } from "vitest"
import { expectError, type Result } from "./iamServer.js"

export const ROUNDS = 5

/** Runs every request at once; the results in request order. */
export const race = (requests: ReadonlyArray<Effect.Effect<Result>>) => Effect.all(requests, { concurrency: "unbounded" })

/** `n` copies of one request, all at once. */
export const burst = (n: number, request: () => Effect.Effect<Result>) => race(Array.from({ length: n }, request))

/** Exactly one result has `status`; every other one is `loserStatus` with `code` in the envelope. The winner. */
export const oneWinner = (results: ReadonlyArray<Result>, status: number, loserStatus: number, code: string) => {
  expect(results.map((r) => r.status).sort(), JSON.stringify(results.map((r) => r.body))).toEqual(
    [status, ...Array<number>(results.length - 1).fill(loserStatus)].sort()
  )
  for (const result of results) if (result.status !== status) expectError(result, loserStatus, code)
  return results.find((r) => r.status === status)!
}

/** The resource ids of every successful audit record of `kind`, oldest first. */
export const successAudits = (kind: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql<{ resource_id: string | null }>`
        SELECT resource_id FROM audit_events WHERE kind = ${kind} AND outcome = 'success' ORDER BY id
      `,
      (rows) => rows.map((row) => row.resource_id)
    ))

/** A 5xx anywhere is a leaked failure (a unique violation or serialization failure, say). */
export const noServerErrors = (results: ReadonlyArray<Result>) =>
  expect(results.filter((r) => r.status >= 500).map((r) => r.text)).toEqual([])

/** How many statements of this database wait for a lock: a race held at a chosen point. */
export const lockWaiters = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql<{ n: number }>`
    SELECT count(*)::int AS n FROM pg_stat_activity
    WHERE datname = current_database() AND wait_event_type = 'Lock'
  `).pipe(Effect.map((rows) => rows[0]!.n))
