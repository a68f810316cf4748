/**
 * A source's live status at the Credential Gateway (SPEC 2.10): asked on each single read, never
 * on a list. A gateway that does not answer gives `failed` with a fixed reason; the read itself
 * still succeeds.
 */
import type { CredentialSourceStatus } from "@svc/core/api"
import type { CredentialSourceState } from "@svc/core/db"
import type { CredentialGatewayClient } from "@svc/core/drivers/credentialGateway"
import { Effect } from "effect"

export const GATEWAY_SILENT = "The Credential Gateway did not answer."
export const GATEWAY_REFUSED = "The Credential Gateway refused the status request."

export const liveStatus = (
  client: CredentialGatewayClient | undefined,
  sourceId: string,
  state: CredentialSourceState
): Effect.Effect<CredentialSourceStatus> => {
  if (client === undefined) return Effect.succeed({ state: "failed", reason: "No Credential Gateway is selected." })
  return client.probe(sourceId).pipe(
    Effect.map((found): CredentialSourceStatus =>
      found === "absent" ? { state: "absent" } : state === "ready" ? { state: "ready" } : { state: "pending" }
    ),
    Effect.catchTag("CredentialGatewayError", (error) =>
      Effect.succeed<CredentialSourceStatus>({ state: "failed", reason: error.outcome === "rejected" ? GATEWAY_REFUSED : GATEWAY_SILENT }))
  )
}
