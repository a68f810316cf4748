/**
 * How the ServiceAccount Driver's failures reach a caller: 503 `DEPENDENCY_UNAVAILABLE` with a
 * fixed message per reason (never upstream text), and which failures prove the upstream did
 * not act (so what we recorded before the call can be undone).
 */
import { DependencyUnavailable } from "@svc/core/errors"
import type { ServiceAccountUpstreamError } from "@svc/core/drivers/serviceAccount"

const messages: Record<ServiceAccountUpstreamError["reason"], string> = {
  credentials_rejected: "The model vendor rejected the Backend's admin key.",
  rate_limited: "The model vendor is rate limiting the Backend; try again later.",
  unavailable: "The model vendor's Admin API is unavailable.",
  invalid_response: "The model vendor's Admin API answered unexpectedly.",
  timeout: "The model vendor's Admin API did not answer in time.",
  admin_key_unreadable: "The Backend's admin key file cannot be read."
}

export const upstreamUnavailable = (error: ServiceAccountUpstreamError) =>
  new DependencyUnavailable({ message: messages[error.reason] })

/** The upstream answered, and the answer says it did nothing (or we never reached it with a key). */
export const upstreamDidNotAct = (error: ServiceAccountUpstreamError): boolean =>
  error.reason === "credentials_rejected" || error.reason === "rate_limited" || error.reason === "admin_key_unreadable" ||
  (error.reason === "invalid_response" && error.status !== undefined && error.status >= 400 && error.status < 500)

export const noDriver = () =>
  new DependencyUnavailable({ message: "No ServiceAccount Driver is selected in this Installation." })

/** Deterministic, so a create whose answer was lost is found again by name (UPSTREAMS.md). */
export const upstreamNameOf = (name: string, id: string): string => `${name}-${id}`
