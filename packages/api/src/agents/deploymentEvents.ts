/**
 * A deployment's status as Server-Sent Events (DESIGN §18 "Watch", an extension). Authorized
 * exactly as the status read, which also gives the first event. Changes arrive as notifications
 * on the API's one LISTEN connection (`DeploymentNotifications`); a stream re-reads its status
 * only when its deployment was named, or after that connection was re-established. Nothing
 * polls. The stream closes after a terminal status, when the revision is gone, or when the
 * client goes away; each caller principal holds at most `MAX_DEPLOYMENT_STREAMS_PER_CALLER`.
 */
import { HttpServerResponse } from "@effect/platform"
import {
  DEPLOYMENT_STATUS_EVENT,
  DeploymentStatus,
  DeploymentStreamLimit,
  DeploymentStreamLimitWire,
  MAX_DEPLOYMENT_STREAMS_PER_CALLER
} from "@svc/core/api"
import { CurrentCaller } from "@svc/core/iam"
import type { AgentId, NamespaceId, RevisionId } from "@svc/core/schema"
import { Context, Duration, Effect, Option, Ref, Schedule, Schema, Stream } from "effect"
import { DeploymentNotifications } from "./deploymentNotifications.js"
import { Deployments } from "./deployments.js"
import { exportedFn } from "@svc/core/observability"

/** How often an idle stream sends a comment, so proxies and clients see it is alive. */
export class DeploymentEventsHeartbeat extends Context.Reference<DeploymentEventsHeartbeat>()(
  "@svc/api/DeploymentEventsHeartbeat",
  { defaultValue: (): Duration.Duration => Duration.seconds(15) }
) {}

const encodeStatus = Schema.encode(DeploymentStatus)

const encodeLimit = Schema.encode(DeploymentStreamLimitWire)

/**
 * The 429 as `DeploymentStreamLimitWire` documents it. Sent as a response, like sign-in's 429:
 * the error pipeline passes on only SPEC 7.1's classes, and this status is not one of theirs.
 */
const limitReached = encodeLimit(new DeploymentStreamLimit({
  message: `At most ${MAX_DEPLOYMENT_STREAMS_PER_CALLER} deployment event streams may be open per caller; close one first.`
})).pipe(
  Effect.flatMap((body) => HttpServerResponse.json(body, { status: 429 })),
  Effect.orDie
)

const isTerminal = (status: DeploymentStatus) => status.status === "succeeded" || status.status === "failed"

export class DeploymentEvents extends Effect.Service<DeploymentEvents>()("@svc/api/DeploymentEvents", {
  effect: Effect.gen(function* () {
    const deployments = yield* Deployments
    const notifications = yield* DeploymentNotifications
    const heartbeat = yield* DeploymentEventsHeartbeat
    /** Open streams per caller principal. */
    const open = yield* Ref.make(new Map<string, number>())

    const acquireSlot = (principalId: string) =>
      Ref.modify(open, (counts) => {
        const held = counts.get(principalId) ?? 0
        if (held >= MAX_DEPLOYMENT_STREAMS_PER_CALLER) return [false, counts] as const
        return [true, new Map(counts).set(principalId, held + 1)] as const
      })

    const releaseSlot = (principalId: string) =>
      Ref.update(open, (counts) => {
        const next = new Map(counts)
        const held = (next.get(principalId) ?? 1) - 1
        if (held <= 0) next.delete(principalId)
        else next.set(principalId, held)
        return next
      })

    /** One SSE event: the status as the status read's `data`, one line of JSON. */
    const toEvent = (status: DeploymentStatus) =>
      Effect.map(encodeStatus(status), (wire) => `event: ${DEPLOYMENT_STATUS_EVENT}\ndata: ${JSON.stringify(wire)}\n\n`).pipe(Effect.orDie)

    /**
     * The stream of one deployment's statuses: `first`, then a re-read at subscription (a change
     * between the authorizing read and the subscription is not lost), then one re-read per
     * notification naming it or per resync. A read that fails (database lost) is skipped: the
     * listen connection is lost with it, and its reconnect resyncs.
     */
    const statuses = (namespaceId: NamespaceId, agentId: AgentId, deploymentId: RevisionId, first: DeploymentStatus) => {
      const read = deployments.currentStatus(namespaceId, agentId, deploymentId).pipe(
        Effect.map(Option.some),
        Effect.catchAllCause((cause) => Effect.as(Effect.logWarning("deployment status re-read failed", cause), Option.none()))
      )
      const changes = Stream.unwrapScoped(
        Effect.map(notifications.subscribe, (subscription) =>
          Stream.concat(
            Stream.make(null),
            Stream.fromQueue(subscription).pipe(
              Stream.filter((signal) => signal._tag === "Resync" || signal.deploymentId === deploymentId)
            )
          ).pipe(Stream.mapEffect(() => read), Stream.filterMap((result) => result)))
      )
      return Stream.concat(Stream.make(Option.some(first)), changes).pipe(
        // A revision that is gone ends the stream: there is nothing more to tell.
        Stream.takeWhile(Option.isSome),
        Stream.map((status) => status.value),
        Stream.takeUntil(isTerminal),
        Stream.mapEffect(toEvent),
        Stream.changes
      )
    }

    const watch = exportedFn("Agents.deploymentEvents")(function* (namespaceId: NamespaceId, agentId: AgentId, deploymentId: RevisionId) {
      const caller = yield* CurrentCaller
      // Authorization and the 404s exactly as the status read, answered before the stream starts.
      const first = yield* deployments.deployment(namespaceId, agentId, deploymentId)
      if (!(yield* acquireSlot(caller.principalId))) return yield* limitReached
      const release = releaseSlot(caller.principalId)
      const body = statuses(namespaceId, agentId, deploymentId, first).pipe(
        Stream.merge(Stream.fromSchedule(Schedule.spaced(heartbeat)).pipe(Stream.as(": heartbeat\n\n")), { haltStrategy: "left" }),
        Stream.encodeText,
        Stream.ensuring(release)
      )
      return HttpServerResponse.stream(body, {
        contentType: "text/event-stream",
        headers: { "cache-control": "no-cache", "x-accel-buffering": "no" }
      })
    })

    return { watch }
  }),
  dependencies: [Deployments.Default, DeploymentNotifications.Default]
}) {}
