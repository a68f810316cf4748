/**
 * The App's authentication to the code host (UPSTREAMS.md): an RS256 JWT with `iss` = App id,
 * `iat` backdated 60 s for clock skew and a lifetime under the host's 600 s maximum. Signed with
 * Node's own crypto: three base64url parts need no library.
 */
import { type KeyObject, sign } from "node:crypto"

const part = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString("base64url")

export const appJwt = (key: KeyObject, appId: string, nowMs: number): string => {
  const now = Math.floor(nowMs / 1000)
  const unsigned = `${part({ alg: "RS256", typ: "JWT" })}.${part({ iat: now - 60, exp: now + 540, iss: appId })}`
  return `${unsigned}.${sign("RSA-SHA256", Buffer.from(unsigned), key).toString("base64url")}`
}
