/**
 * The claim functions' cost does not grow with the backlog (migration 0021). Each function's plan
 * is made once per session, from the statistics of that moment; a session that starts while a
 * backlog sits in a never-analyzed `work_items` used to get a plan that reads every queued item
 * and sorts them for each claim. The pages a claim reads (`EXPLAIN (ANALYZE, BUFFERS)` of the
 * call, which counts the function's own statements) are compared at two backlogs, each claimed in
 * a session that starts with that backlog in place: deterministic, unlike a timing.
 */
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import pg from "pg"
import { DatabaseUrl, TestDatabase } from "./harness.js"

const CALLS = {
  work_claim: (kind: string) => `SELECT * FROM work_claim('plans-worker', '{${kind}}', 30, 1, NULL, NULL, 'SUCCEEDED', 'ok')`,
  work_claim_batch: (kind: string) =>
    `SELECT * FROM work_claim_batch('plans-worker', '{${kind}}', 30, 4, '{}', '{}', 'SUCCEEDED', 'ok')`
} as const

interface PlanNode {
  readonly "Shared Hit Blocks": number
  readonly "Shared Read Blocks": number
  readonly "Actual Rows": number
}

let measurements = 0

/**
 * `backlog` queued items of a kind of their own, then a claim in a new session: pages read and
 * rows claimed. The items are removed afterwards, so each measurement's table holds its own
 * backlog alone.
 */
const claimWithBacklog = (fn: keyof typeof CALLS, backlog: number) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const url = yield* DatabaseUrl
    const kind = `plans.${fn}.${backlog}`
    // Due before every earlier measurement's items: their index entries, dead once removed, stay
    // until a vacuum, and a claim would pass over them first (as many as a concurrent snapshot
    // keeps from being marked dead), which is not what is measured here.
    measurements += 1
    yield* sql`
      INSERT INTO work_items (id, kind, key, deadline_at, next_attempt_at)
      SELECT gen_random_uuid(), ${kind}, 'k-' || g, now() + interval '1 hour', now() - make_interval(days => ${measurements})
      FROM generate_series(1, ${backlog}) AS g
    `
    return yield* Effect.acquireUseRelease(
      Effect.promise(async () => {
        const client = new pg.Client({ connectionString: url })
        await client.connect()
        return client
      }),
      (client) =>
        Effect.promise(async () => {
          const explain = async () => {
            const result = await client.query<{ "QUERY PLAN": ReadonlyArray<{ Plan: PlanNode }> }>(
              `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${CALLS[fn](kind)}`
            )
            const plan = result.rows[0]!["QUERY PLAN"][0]!.Plan
            return { pages: plan["Shared Hit Blocks"] + plan["Shared Read Blocks"], rows: plan["Actual Rows"] }
          }
          // The first call also loads the function and the catalog; the second is a claim alone.
          await explain()
          return explain()
        }),
      (client) => Effect.promise(() => client.end())
    ).pipe(Effect.ensuring(Effect.orDie(sql`DELETE FROM work_items WHERE kind = ${kind}`)))
  })

layer(TestDatabase, { timeout: 60_000, excludeTestServices: true })("the claim functions' plans", (it) => {
  for (const [fn, claimed] of [["work_claim", 1], ["work_claim_batch", 4]] as const) {
    it.effect(`${fn}: a claim reads as many pages with 8 000 items queued as with 2 000`, () =>
      Effect.gen(function* () {
        const small = yield* claimWithBacklog(fn, 2_000)
        const large = yield* claimWithBacklog(fn, 8_000)
        expect(small.rows).toBe(claimed)
        expect(large.rows).toBe(claimed)
        // A plan that reads and sorts the backlog reads about 150-170 pages more at 8 000 (19 -> 188
        // and 265 -> 413 without migration 0021). The ordered plan reads the same few pages, give
        // or take a handful a busy database leaves behind (61 -> 68 was seen under a full run).
        expect(large.pages - small.pages, JSON.stringify({ small, large })).toBeLessThanOrEqual(20)
      }))
  }
})
