/**
 * Native admin UI settings (SPEC 4.4 rule 2, 5.8): the Agent host suffix under which each Agent
 * gets a derived host, and the explicit parent domain the shared session cookie is scoped to.
 * Pure Schema plus the start-up cross-check against the console origin (SVC_BASE_URL).
 */
import { Schema } from "effect"
import { parse } from "tldts"

const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/

/** A lowercase DNS name of at least two labels: no IP address, no trailing dot, no wildcard. */
const isDnsName = (name: string): boolean =>
  name.length <= 253 && name.split(".").length >= 2 && name.split(".").every((label) => LABEL.test(label)) &&
  // A dotted quad is made of valid labels; no top-level domain is all digits.
  !/^[0-9]+$/.test(name.split(".").at(-1)!)

const DnsName = Schema.String.pipe(
  Schema.filter(isDnsName, {
    message: () => "must be a lowercase DNS name of at least two labels (not an IP address, no trailing dot)"
  })
)

/**
 * Whether `name` is a public suffix (ICANN or private section of the Public Suffix List, as
 * browsers use it): a cookie scoped to one would be shared with unrelated sites.
 */
export const isPublicSuffix = (name: string): boolean => {
  const parsed = parse(name, { allowPrivateDomains: true })
  return parsed.isIp === true || parsed.domain === null
}

/** `host` is `parent` or below it, on a DNS-label boundary (`xexample.test` is not below `example.test`). */
export const isAtOrBelow = (host: string, parent: string): boolean => host === parent || host.endsWith(`.${parent}`)

export const NativeAdminConfig = Schema.Struct({
  enabled: Schema.Boolean,
  /** Agent hosts are `<label>.<agentHostSuffix>`; see docs/decisions/native-admin.md. */
  agentHostSuffix: DnsName,
  /** The shared cookie's `Domain`: a parent of the console host and of the Agent host suffix. */
  cookieDomain: DnsName
}).pipe(
  Schema.filter((config) => {
    const issues: Array<Schema.FilterIssue> = []
    if (isDnsName(config.cookieDomain) && isPublicSuffix(config.cookieDomain)) {
      issues.push({ path: ["cookieDomain"], message: "is a public suffix; name a domain the Installation owns" })
    }
    if (!isAtOrBelow(config.agentHostSuffix, config.cookieDomain)) {
      issues.push({ path: ["agentHostSuffix"], message: "must be the cookie domain or below it" })
    }
    return issues
  })
)
export type NativeAdminConfig = typeof NativeAdminConfig.Type

/**
 * The checks that need the console origin (SVC_BASE_URL): its host must be a DNS name at or below
 * the cookie domain, and must not itself look like an Agent host. Returns one message per
 * problem (empty: fine). The cookie domain is never widened to make this pass.
 */
export const nativeAdminConsoleProblems = (config: NativeAdminConfig, baseUrl: string): ReadonlyArray<string> => {
  const host = new URL(baseUrl).hostname
  if (!isDnsName(host)) {
    return [`the console host ${JSON.stringify(host)} (SVC_BASE_URL) must be a DNS name to share a cookie`]
  }
  const problems: Array<string> = []
  if (!isAtOrBelow(host, config.cookieDomain)) {
    problems.push(`the console host ${JSON.stringify(host)} (SVC_BASE_URL) is not the cookie domain or below it`)
  }
  if (agentHostLabel(host, config.agentHostSuffix) !== undefined) {
    problems.push(`the console host ${JSON.stringify(host)} (SVC_BASE_URL) would be an Agent host`)
  }
  return problems
}

/**
 * The Agent label of a `Host` header value when it names `<label>.<suffix>` exactly (one DNS
 * label, optional port, case-insensitive); undefined otherwise. `x.<suffix>.evil.com` and
 * `a.b.<suffix>` are not Agent hosts.
 */
export const agentHostLabel = (host: string, suffix: string): string | undefined => {
  const name = host.toLowerCase().replace(/:[0-9]{1,5}$/, "")
  if (!name.endsWith(`.${suffix}`)) return undefined
  const label = name.slice(0, name.length - suffix.length - 1)
  return LABEL.test(label) ? label : undefined
}
