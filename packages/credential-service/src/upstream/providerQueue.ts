/**
 * Provider actions (SPEC 8): calls to the code host's App API (minting, revoking, metadata
 * reads) run one at a time, with at most 64 waiting; past that an action is refused at once
 * with a fixed error instead of piling up behind a slow code host.
 */
import { CredentialServiceLimits } from "@svc/core/schema"
import { Data, Effect } from "effect"

/** The queue of provider actions is full. */
export class ProviderBusy extends Data.TaggedError("ProviderBusy")<{}> {
  override get message() {
    return "the credential service is busy with the code host; try again"
  }
}

export interface ProviderQueue {
  readonly run: <A, E, R>(action: Effect.Effect<A, E, R>) => Effect.Effect<A, E | ProviderBusy, R>
  /** Actions running or waiting now. */
  readonly pending: () => number
}

export const makeProviderQueue = (
  limits: { readonly providerActions: number; readonly queuedActions: number } = CredentialServiceLimits
): ProviderQueue => {
  const permits = Effect.unsafeMakeSemaphore(limits.providerActions)
  let pending = 0
  const run = <A, E, R>(action: Effect.Effect<A, E, R>): Effect.Effect<A, E | ProviderBusy, R> =>
    Effect.suspend((): Effect.Effect<A, E | ProviderBusy, R> => {
      if (pending >= limits.providerActions + limits.queuedActions) return Effect.fail(new ProviderBusy())
      pending++
      return permits.withPermits(1)(action).pipe(Effect.ensuring(Effect.sync(() => void pending--)))
    })
  return { run, pending: () => pending }
}
