/**
 * Settles credential sources (SPEC 3): a registration older than its timeout (an interrupted
 * request) becomes `deleting` and never usable; each `deleting` source is removed from the
 * Credential Gateway (an absent provider counts as removed) and then from the database. Every
 * step is idempotent, so replicas need no coordination; a gateway that does not answer leaves
 * the source for the next run.
 */
import { InstallationConfiguration } from "@svc/core/config"
import { CredentialSourcesRepo } from "@svc/core/db"
import { type CredentialGatewayClient, makeCredentialGatewayClient } from "@svc/core/drivers/credentialGateway"
import { Cause, Duration, Effect, Layer, Option, Schedule } from "effect"
import { withExportedSpan } from "@svc/core/observability"

/** One run: how many sources were removed. */
export const sweepCredentialSources = (client: CredentialGatewayClient, registeringTimeoutMs: number) =>
  Effect.gen(function* () {
    const repo = yield* CredentialSourcesRepo
    const unsettled = yield* repo.unsettled(registeringTimeoutMs).pipe(Effect.orDie)
    let removed = 0
    for (const source of unsettled) {
      const gone = yield* Effect.either(client.remove(source.id))
      if (gone._tag === "Left") {
        yield* Effect.logWarning("credential sources: the gateway did not confirm a removal", { sourceId: source.id, outcome: gone.left.outcome })
        continue
      }
      if (yield* repo.removeUnsettled({ id: source.id, state: "deleting" })) removed++
    }
    if (removed > 0) yield* Effect.logInfo("credential sources: removed", { removed })
    return removed
  }).pipe(withExportedSpan("CredentialSources.sweep"))

/**
 * The sweep every `interval` while a Credential Gateway is selected. A registration times out
 * after three request timeouts: its own request has given up on the gateway by then.
 */
export const CredentialSourceSweepLive = (interval: Duration.DurationInput = Duration.seconds(30)) =>
  Layer.scopedDiscard(
    Effect.gen(function* () {
      const installation = yield* Effect.serviceOption(InstallationConfiguration)
      const backend = Option.getOrUndefined(installation)?.backends.find((b) => b.type === "sandbox_gateway")
      if (Option.getOrUndefined(installation)?.drivers.credentialGateway === undefined || backend?.type !== "sandbox_gateway") return
      const client = yield* Effect.acquireRelease(
        Effect.sync(() => makeCredentialGatewayClient(backend.configuration)),
        (c) => Effect.sync(() => c.close())
      )
      yield* sweepCredentialSources(client, backend.configuration.requestTimeoutMs * 3).pipe(
        Effect.catchAllCause((cause) => Effect.logWarning("credential sources: sweep failed", Cause.pretty(cause))),
        Effect.repeat(Schedule.spaced(interval)),
        Effect.annotateLogs({ fiber: "credentialSources.sweep" }),
        Effect.forkScoped
      )
    })
  ).pipe(Layer.provide(CredentialSourcesRepo.Default))
