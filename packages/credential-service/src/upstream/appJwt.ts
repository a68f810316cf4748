/**
 * The App's authentication to the code host (UPSTREAMS.md): an RS256 JWT with `iss` = App id,
 * `iat` backdated by the provider clock skew allowance (SPEC 8, 60 s), so a host whose clock is
 * up to that much behind ours still sees it issued in the past, and a lifetime of the host's 600 s
 * maximum from `iat`. Signed with Node's own crypto: three base64url parts need no library.
 */
import { CredentialServiceLimits } from "@svc/core/schema"
import { type KeyObject, sign } from "node:crypto"

/** The code host's longest App JWT lifetime (`exp` - `iat`). */
const MAX_LIFETIME_SECONDS = 600

const part = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString("base64url")

export const appJwt = (key: KeyObject, appId: string, nowMs: number): string => {
  const iat = Math.floor(nowMs / 1000) - CredentialServiceLimits.providerClockSkewSeconds
  const unsigned = `${part({ alg: "RS256", typ: "JWT" })}.${part({ iat, exp: iat + MAX_LIFETIME_SECONDS, iss: appId })}`
  return `${unsigned}.${sign("RSA-SHA256", Buffer.from(unsigned), key).toString("base64url")}`
}
