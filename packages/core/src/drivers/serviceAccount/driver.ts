/**
 * The ServiceAccount Driver (SPEC 1.5, 4.5; DESIGN §13): creates, credentials and deletes the
 * upstream account behind a Backend-managed service account. Optional: the tag holds
 * `Option.none()` when the Installation selects none, and the service answers 503 where the
 * Driver is needed.
 */
import { Context, Data, type Effect, Option, type Redacted } from "effect"

/**
 * The upstream did not give a usable answer: refused the admin key (401/403), throttled (429),
 * failed (5xx), answered something unexpected, timed out, or was unreachable. `reason` is a
 * fixed code; no upstream text is kept (it may echo what we sent).
 */
export class ServiceAccountUpstreamError extends Data.TaggedError("ServiceAccountUpstreamError")<{
  readonly reason: "credentials_rejected" | "rate_limited" | "unavailable" | "invalid_response" | "timeout" | "admin_key_unreadable"
  readonly status?: number
}> {
  override get message() {
    return `The model vendor's Admin API failed: ${this.reason}${this.status === undefined ? "" : ` (HTTP ${this.status})`}.`
  }
}

export interface UpstreamCredential {
  readonly id: string
  readonly accessToken: Redacted.Redacted<string>
  readonly workspaceId: string
  readonly expiresAt: Date | null
}

export interface ServiceAccountDriverShape {
  /** The selected Driver's id (`drivers.serviceAccount.id`). */
  readonly id: string
  /** The `model_accounts` Backend whose client this Driver uses. */
  readonly backendId: string
  /**
   * Creates the upstream account named `upstreamName`, or adopts the one a lost earlier answer
   * left behind under that name: never two accounts for one name.
   */
  readonly createAccount: (upstreamName: string) => Effect.Effect<{ readonly upstreamId: string }, ServiceAccountUpstreamError>
  /** Adopts the account named `upstreamName` if it exists (a create whose answer was lost). */
  readonly findAccount: (upstreamName: string) => Effect.Effect<Option.Option<string>, ServiceAccountUpstreamError>
  readonly issueCredential: (upstreamId: string, name: string) => Effect.Effect<UpstreamCredential, ServiceAccountUpstreamError>
  /** Succeeds when the credential is gone (already-gone included). */
  readonly deleteCredential: (upstreamId: string, credentialId: string) => Effect.Effect<void, ServiceAccountUpstreamError>
  /** Succeeds when the account is gone (already-gone included). */
  readonly deleteAccount: (upstreamId: string) => Effect.Effect<void, ServiceAccountUpstreamError>
}

/**
 * A reference whose default is "none selected": each main.ts provides the selection
 * (`selectDrivers`), and a composition that selects nothing (most tests) needs no wiring.
 */
export class ServiceAccountDriver extends Context.Reference<ServiceAccountDriver>()(
  "@svc/core/drivers/serviceAccount/ServiceAccountDriver",
  { defaultValue: (): Option.Option<ServiceAccountDriverShape> => Option.none() }
) {}
