/**
 * `svc_work_items{kind,state}` and `svc_work_queue_oldest_age_seconds{kind}`, sampled from the
 * database on a schedule by every worker (replicas report the same values: aggregate with max,
 * not sum). Only unfinished states are counted: finished items pile up for ever and are
 * covered by `svc_work_transitions_total`. The age is measured from when the oldest queued item
 * became due, so an item waiting out its retry back-off does not count as late.
 */
import type { SqlClient } from "@effect/sql"
import { SvcMetrics } from "@svc/core/observability"
import { Duration, Effect, Metric, Schedule } from "effect"

const UNFINISHED = ["queued", "running"] as const

/** How often the queue is sampled. */
export const QUEUE_SAMPLE_INTERVAL = Duration.seconds(5)

interface Row {
  readonly kind: string
  readonly state: string
  readonly count: number
  readonly oldest_due_seconds: number | null
}

const setItems = (kind: string, state: string, count: number) =>
  Metric.set(Metric.tagged(Metric.tagged(SvcMetrics.workItems, "kind", kind), "state", state), count)

const setAge = (kind: string, seconds: number) =>
  Metric.set(Metric.tagged(SvcMetrics.workQueueOldestAge, "kind", kind), seconds)

/**
 * A fiber (scoped) that samples every `QUEUE_SAMPLE_INTERVAL`, first at once. Kinds known from
 * the registry or an earlier sample are set to 0 when nothing of theirs is left, so a drained
 * queue reads 0 instead of its last value.
 */
export const sampleQueue = (sql: SqlClient.SqlClient, kinds: Effect.Effect<ReadonlyArray<string>>) => {
  const known = new Set<string>()
  const sample = Effect.gen(function* () {
    for (const kind of yield* kinds) known.add(kind)
    const rows = yield* sql<Row>`
      SELECT kind, state, count(*)::int AS count,
             extract(epoch FROM now() - min(next_attempt_at) FILTER (WHERE next_attempt_at <= now()))::float8
               AS oldest_due_seconds
      FROM work_items
      WHERE state IN ('queued', 'running')
      GROUP BY kind, state
    `
    for (const row of rows) known.add(row.kind)
    for (const kind of known) {
      for (const state of UNFINISHED) {
        const row = rows.find((r) => r.kind === kind && r.state === state)
        yield* setItems(kind, state, row?.count ?? 0)
      }
      const queued = rows.find((r) => r.kind === kind && r.state === "queued")
      yield* setAge(kind, Math.max(0, queued?.oldest_due_seconds ?? 0))
    }
  })
  return sample.pipe(
    Effect.catchAllCause((cause) => Effect.logWarning("work queue sample failed", cause)),
    Effect.repeat(Schedule.spaced(QUEUE_SAMPLE_INTERVAL)),
    Effect.annotateLogs({ fiber: "work.metrics" }),
    Effect.interruptible,
    Effect.forkScoped
  )
}
