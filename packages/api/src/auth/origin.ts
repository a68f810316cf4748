import type { Headers } from "@effect/platform"

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"])

export const isSafeMethod = (method: string): boolean => SAFE_METHODS.has(method.toUpperCase())

/**
 * SPEC 5.3 for cookie-authenticated mutations (sign-out included): `Origin` equal to the auth
 * base URL's origin, and `Sec-Fetch-Site`, when present, `same-origin`.
 */
export const isTrustedBrowserMutation = (headers: Headers.Headers, trustedOrigin: string): boolean => {
  const origin = headers["origin"]
  if (origin === undefined || origin !== trustedOrigin) return false
  const site = headers["sec-fetch-site"]
  return site === undefined || site === "same-origin"
}
