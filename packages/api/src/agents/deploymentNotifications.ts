/**
 * The API's one `LISTEN svc_deployment` connection (migration 0014 sends on it), fanned out to
 * every open deployment event stream through a PubSub. The connection comes back when it is lost
 * (`listenReconnecting`), and every (re)connect publishes `Resync`, because notifications sent
 * while nobody listened are gone: each stream then re-reads its status, so no terminal event is
 * lost.
 */
import { listenReconnecting } from "@svc/core/db"
import { DEPLOYMENT_CHANNEL } from "@svc/core/work"
import { Effect, PubSub, Stream } from "effect"

/** What the listener tells the streams: one deployment changed, or re-read everything. */
export type DeploymentSignal =
  | { readonly _tag: "Changed"; readonly deploymentId: string }
  | { readonly _tag: "Resync" }

export class DeploymentNotifications extends Effect.Service<DeploymentNotifications>()("@svc/api/DeploymentNotifications", {
  scoped: Effect.gen(function* () {
    const signals = yield* PubSub.unbounded<DeploymentSignal>()
    yield* listenReconnecting(DEPLOYMENT_CHANNEL, "svc-api-deployment-events").pipe(
      Stream.map((event): DeploymentSignal =>
        event._tag === "Listening" ? { _tag: "Resync" } : { _tag: "Changed", deploymentId: event.payload }
      ),
      Stream.runForEach((signal) => PubSub.publish(signals, signal)),
      Effect.annotateLogs({ fiber: "deployment.listen" }),
      Effect.interruptible,
      Effect.forkScoped
    )

    return {
      /** A subscription for the caller's scope: take signals from it until the scope closes. */
      subscribe: PubSub.subscribe(signals)
    }
  })
}) {}
