/**
 * What the work engine reports about its own attempts: claims (with how long the item had been
 * due) and the states its outcomes moved items to. Kinds are the registered handler kinds, a
 * small fixed set, so they are safe labels.
 */
import { SvcMetrics } from "@svc/core/observability"
import { Effect, Metric, MetricLabel } from "effect"
import type { ClaimedItem } from "./leases.js"
import type { Recorded } from "./outcomes.js"

/**
 * Tagged metrics built once per label set: building one (a new key, hashed, looked up in the
 * registry) on every attempt was a visible share of the engine's CPU per item (issue 11).
 */
const memo = <A>(make: (label: string) => A) => {
  const built = new Map<string, A>()
  return (label: string): A => {
    let metric = built.get(label)
    if (metric === undefined) {
      metric = make(label)
      built.set(label, metric)
    }
    return metric
  }
}

// One label array per metric (not chained `Metric.tagged`, which merges arrays on every update):
// Effect caches a metric's registry hook by the identity of that array (see httpMetrics.ts).
const transitions = memo((kindTo) => {
  const [kind, to] = kindTo.split("\u0000") as [string, string]
  return Metric.taggedWithLabels(SvcMetrics.workTransitions, [MetricLabel.make("kind", kind), MetricLabel.make("to", to)])
})
const claimLatency = memo((kind) => Metric.taggedWithLabels(SvcMetrics.workClaimLatency, [MetricLabel.make("kind", kind)]))

const transition = (kind: string, to: string) => Metric.increment(transitions(`${kind}\u0000${to}`))

/** A claim's two updates, for one kind: built once, applied in one synchronous step. */
const claims = memo((kind) => {
  const running = transitions(`${kind}\u0000running`)
  const latency = claimLatency(kind)
  // This process sets no fiber metric labels (`Effect.labelMetrics`), so there are no extra tags.
  return (item: ClaimedItem) =>
    Effect.sync(() => {
      running.unsafeUpdate(1, [])
      latency.unsafeUpdate(Math.max(0, item.claimedAt.getTime() - item.scheduledAt.getTime()) / 1000, [])
    })
})

/** A claim: the item went to `running`, after waiting since it was due (both database times). */
export const recordClaim = (item: ClaimedItem): Effect.Effect<void> => claims(item.kind)(item)

/** An outcome this worker recorded; a fenced one (lease lost) changed nothing. */
export const recordOutcome = (kind: string, recorded: Recorded | null): Effect.Effect<void> =>
  recorded === null || recorded._tag === "Fenced" ? Effect.void : transition(kind, recorded.state)

/** Items the reaper moved (an expired lease back to `queued`, or to `failed` past the deadline). */
export const recordReaped = (rows: ReadonlyArray<{ readonly kind?: unknown; readonly state?: unknown }>): Effect.Effect<void> =>
  Effect.forEach(rows, (row) => transition(String(row.kind), String(row.state)), { discard: true })
