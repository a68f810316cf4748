/**
 * The session bearer a client presents: the Basic password for Git (any user name), or
 * `token`/`Bearer` for the REST API.
 */
import type { IncomingHttpHeaders } from "node:http"

export const presentedBearer = (headers: IncomingHttpHeaders): string | undefined => {
  const auth = headers.authorization
  if (auth === undefined) return undefined
  const space = auth.indexOf(" ")
  const scheme = auth.slice(0, space).toLowerCase()
  const value = auth.slice(space + 1).trim()
  if (scheme === "token" || scheme === "bearer") return value === "" ? undefined : value
  if (scheme !== "basic") return undefined
  const decoded = Buffer.from(value, "base64").toString("utf8")
  const colon = decoded.indexOf(":")
  return colon < 0 || colon === decoded.length - 1 ? undefined : decoded.slice(colon + 1)
}
