/**
 * Response headers of the console (DESIGN §16). The page runs no inline script or style, so the
 * policy allows only this origin; the API it calls is the same origin.
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "object-src 'none'",
  "frame-ancestors 'none'"
].join("; ")

const common = {
  "x-content-type-options": "nosniff",
  "referrer-policy": "same-origin"
} as const

export const htmlHeaders = {
  ...common,
  "content-security-policy": CONTENT_SECURITY_POLICY,
  "x-frame-options": "DENY",
  "cache-control": "no-store"
} as const

export const immutableAssetHeaders = { ...common, "cache-control": "public, max-age=31536000, immutable" } as const

/** Unhashed files (favicon and the like) may change with a release: revalidate each time. */
export const plainAssetHeaders = { ...common, "cache-control": "no-cache" } as const
