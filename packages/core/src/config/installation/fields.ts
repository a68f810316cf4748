/** Field schemas shared by the Installation configuration file (no Node-only imports). */
import { Schema } from "effect"
import { charLength } from "../../schema/strings.js"

const hasControlCharacter = (s: string): boolean => {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (c < 0x20 || (c >= 0x7f && c <= 0x9f)) return true
  }
  return false
}

/** 1-200 characters, no leading/trailing whitespace, no control characters (SPEC 2.15). */
export const Identifier = Schema.String.pipe(
  Schema.minLength(1, { message: () => "must not be empty" }),
  // Characters as SPEC counts them (code points), not UTF-16 code units.
  Schema.filter((s) => charLength(s) <= 200, { message: () => "must be at most 200 characters" }),
  Schema.filter((s) => s.trim() === s && !hasControlCharacter(s), {
    message: () => "must not have leading or trailing whitespace or control characters"
  })
)

export const AbsolutePath = Schema.String.pipe(
  Schema.filter((s) => s.startsWith("/") && !s.includes("\0"), { message: () => "must be an absolute path" })
)

export const boundedInt = (min: number, max: number) =>
  Schema.Number.pipe(
    Schema.filter((n) => Number.isSafeInteger(n) && n >= min && n <= max, {
      message: () => `must be an integer between ${min} and ${max}`
    })
  )

const isLoopbackHost = (hostname: string): boolean =>
  hostname === "localhost" || hostname === "[::1]" || /^127(\.[0-9]{1,3}){3}$/.test(hostname)

/** An https URL (http only for a loopback host, for local development and tests). */
export const HttpsUrl = Schema.String.pipe(
  Schema.filter((s) => {
    try {
      const url = new URL(s)
      return url.username === "" && url.password === "" &&
        (url.protocol === "https:" || (url.protocol === "http:" && isLoopbackHost(url.hostname)))
    } catch {
      return false
    }
  }, { message: () => "must be an https URL without user name or password (http only for a loopback host)" })
)

/** An IPv6 literal in brackets, as a URL host takes it (no zone identifier). */
const isBracketedIpv6 = (host: string): boolean => {
  if (!/^\[[0-9A-Fa-f:.]+\]$/.test(host)) return false
  try {
    new URL(`http://${host}/`)
    return true
  } catch {
    return false
  }
}

/**
 * A DNS host name as RFC 1123 has it (labels of letters, digits and inner hyphens, at most 63
 * characters each and 253 in all), which also covers a dotted IPv4 address. URL parsing alone
 * takes `-`, `a..b` or `a_b` as hosts; no resolver does.
 */
const isHostName = (host: string): boolean =>
  host.length <= 253 && /^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/.test(host)

const isPort = (digits: string): boolean => digits.length <= 5 && Number(digits) >= 1 && Number(digits) <= 65535

/**
 * `host:port` (the host a name, an IPv4 address or a bracketed IPv6 literal, as in
 * `[::1]:8443`: unbracketed, an IPv6 address's colons would run into the port), or an
 * http/https origin without credentials, path, query or fragment. Port 0 is refused in both.
 */
export const Endpoint = Schema.String.pipe(
  Schema.filter((s) => {
    const hostPort = /^(\[[^\]]*\]|[A-Za-z0-9.-]+):([0-9]+)$/.exec(s)
    if (hostPort) {
      const [, host = "", port = ""] = hostPort
      return (host.startsWith("[") ? isBracketedIpv6(host) : isHostName(host)) && isPort(port)
    }
    if (!/^https?:\/\/[^/?#@]+$/.test(s)) return false
    try {
      const url = new URL(s)
      return url.port !== "0" && (url.hostname.startsWith("[") || isHostName(url.hostname))
    } catch {
      return false
    }
  }, { message: () => "must be host:port or an http(s) origin without credentials, path, query or fragment" })
)

export const DnsName = Schema.String.pipe(
  Schema.filter(
    (s) => s.length <= 253 && /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/.test(s),
    { message: () => "must be a lowercase DNS name" }
  )
)
