/**
 * Following one deployment until it ends. `watchDeployment` takes its updates as a Stream, so
 * where they come from is one argument: `pollingUpdates` reads `GET …/deployments/{id}` now; a
 * source over the server-sent events endpoint (`GET …/deployments/{id}/events`) can replace it
 * without touching the watching or the rendering.
 */
import type { DeploymentStatus } from "@svc/core/api"
import type { Client } from "@svc/core/client"
import type { AgentId, NamespaceId, RevisionId } from "@svc/core/schema"
import { type Duration, Effect, Option, Schedule, Stream } from "effect"

export interface DeploymentRef {
  readonly namespaceId: NamespaceId
  readonly agentId: AgentId
  readonly deploymentId: RevisionId
}

/** Where a deployment's successive statuses come from. */
export type DeploymentUpdates<E> = (ref: DeploymentRef) => Stream.Stream<DeploymentStatus, E>

export const isTerminal = (status: DeploymentStatus): boolean => status.status === "succeeded" || status.status === "failed"

/** Reads the persisted status every `interval` (the first read at once). */
export const pollingUpdates = (client: Client, interval: Duration.DurationInput) => (ref: DeploymentRef) =>
  Stream.repeatEffectWithSchedule(client.agents.deployment({ path: ref }), Schedule.spaced(interval))

const sameStatus = (a: DeploymentStatus, b: DeploymentStatus): boolean => JSON.stringify(a) === JSON.stringify(b)

/**
 * Calls `onChange` with each status that differs from the one before, and ends with the first
 * terminal one (`succeeded` or `failed`).
 */
export const watchDeployment = <E, E2>(
  updates: Stream.Stream<DeploymentStatus, E>,
  onChange: (status: DeploymentStatus) => Effect.Effect<void, E2>
): Effect.Effect<DeploymentStatus, E | E2 | Error> =>
  updates.pipe(
    Stream.changesWith(sameStatus),
    Stream.tap(onChange),
    Stream.takeUntil(isTerminal),
    Stream.runLast,
    Effect.flatMap((last) =>
      Option.isSome(last) && isTerminal(last.value)
        ? Effect.succeed(last.value)
        : Effect.fail(new Error("the deployment's updates ended before it did"))
    )
  )
