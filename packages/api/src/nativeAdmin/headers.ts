/**
 * What crosses the native admin proxy (SPEC 5.8): the browser's credentials, forwarded identity
 * and native scope headers never reach the gateway; the gateway's own token is added instead.
 * Pure functions over Node header records, so the rules are testable on their own.
 */
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from "node:http"

/** Hop-by-hop headers (RFC 9110 7.6.1): never forwarded as they are. */
const HOP_BY_HOP = new Set(["connection", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade"])

/** Credentials and identity claims of the browser or of anything in front of us. */
const STRIPPED = new Set([
  "cookie",
  "authorization",
  "proxy-authorization",
  "x-api-key",
  "x-svc-session-key",
  "forwarded",
  "x-real-ip",
  "x-client-ip",
  "true-client-ip",
  "cf-connecting-ip",
  "remote-user",
  "x-remote-user",
  "x-user",
  "x-email"
])

/**
 * Prefixes of identity or scope headers: OpenClaw's own (`x-openclaw-scopes`, `-token`,
 * `-password`, `-session-key`, `-account-id`, ...), the forwarded family (`x-forwarded-user` is
 * one of OpenClaw's trusted-proxy identity headers), Tailscale Serve identity headers, common
 * auth-proxy headers, and ours (`x-svc-*`).
 */
const STRIPPED_PREFIXES = ["x-openclaw-", "x-forwarded-", "tailscale-", "x-auth-request-", "x-svc-"]

const isStripped = (name: string): boolean => STRIPPED.has(name) || STRIPPED_PREFIXES.some((prefix) => name.startsWith(prefix))

/** Header names listed in `Connection` are hop-by-hop for this message too. */
const connectionListed = (headers: IncomingHttpHeaders): Set<string> =>
  new Set(String(headers["connection"] ?? "").split(",").map((name) => name.trim().toLowerCase()).filter((name) => name !== ""))

/**
 * The request headers the gateway gets. `target` is the gateway's `host:port`: `Host` and (when
 * the browser sent one, after our own Origin check) `Origin` name the gateway's loopback origin,
 * which the gateway trusts for its own Control UI. `upgrade`: the WebSocket handshake headers
 * are kept.
 */
export const gatewayRequestHeaders = (
  headers: IncomingHttpHeaders,
  gateway: { readonly host: string; readonly token: string },
  upgrade: boolean
): OutgoingHttpHeaders => {
  const listed = connectionListed(headers)
  const out: OutgoingHttpHeaders = {}
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || HOP_BY_HOP.has(name) || listed.has(name) || isStripped(name)) continue
    if (name === "host" || name === "origin") continue
    out[name] = value
  }
  out["host"] = gateway.host
  if (headers["origin"] !== undefined) out["origin"] = `http://${gateway.host}`
  out["authorization"] = `Bearer ${gateway.token}`
  if (upgrade) {
    out["connection"] = "Upgrade"
    out["upgrade"] = headers["upgrade"] ?? "websocket"
  }
  return out
}

/**
 * The response headers the browser gets: hop-by-hop headers dropped, and no `Set-Cookie`, so a
 * gateway can never set or overwrite a cookie on the shared domain (the session cookie above
 * all); `x-request-id` of this request added.
 */
export const browserResponseHeaders = (headers: IncomingHttpHeaders, requestId: string): OutgoingHttpHeaders => {
  const listed = connectionListed(headers)
  const out: OutgoingHttpHeaders = {}
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || HOP_BY_HOP.has(name) || listed.has(name) || name === "set-cookie") continue
    out[name] = value
  }
  out["x-request-id"] = requestId
  return out
}
