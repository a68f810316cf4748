/**
 * What a listener request may reach for its session's one repository: the three Git smart
 * HTTP endpoints, and the REST allowlist of UPSTREAMS.md under `/api/v3` (the layout the
 * code-host CLI uses for a self-hosted API host).
 */
export type Route =
  | { readonly kind: "git"; readonly service: "git-upload-pack" | "git-receive-pack"; readonly endpoint: "info/refs" | "rpc" }
  | { readonly kind: "api"; readonly upstreamPath: string }

const GIT = /^\/([^/]+)\/([^/]+?)(?:\.git)?\/(info\/refs|git-upload-pack|git-receive-pack)$/
const API = /^\/api\/v3\/repos\/([^/]+)\/([^/]+)((?:\/[a-z_]+(?:\/[0-9]{1,10})?)*)$/

/** Method and sub-path pairs of the REST allowlist (`{n}` is a number). */
const apiAllowlist: ReadonlyArray<readonly [string, RegExp]> = [
  ["GET", /^$/],
  ["GET", /^\/readme$/],
  ["GET", /^\/pulls$/],
  ["POST", /^\/pulls$/],
  ["GET", /^\/pulls\/[0-9]+$/],
  ["PATCH", /^\/pulls\/[0-9]+$/],
  ["GET", /^\/issues$/],
  ["POST", /^\/issues$/],
  ["GET", /^\/issues\/[0-9]+$/],
  ["PATCH", /^\/issues\/[0-9]+$/],
  ["GET", /^\/issues\/[0-9]+\/comments$/],
  ["POST", /^\/issues\/[0-9]+\/comments$/]
]

export const allowedQueryParameters: ReadonlySet<string> = new Set([
  "state", "per_page", "page", "sort", "direction", "labels", "since", "head", "base", "creator", "assignee", "mentioned"
])

/** The route of `method url` for a session on `repository` (`owner/name`, lowercase); undefined: not allowed. */
export const routeOf = (method: string, url: URL, repository: string): Route | undefined => {
  const git = GIT.exec(url.pathname)
  if (git !== null) {
    if (`${git[1]}/${git[2]}`.toLowerCase() !== repository) return undefined
    if (git[3] === "info/refs") {
      const service = url.searchParams.get("service")
      if (method !== "GET" || (service !== "git-upload-pack" && service !== "git-receive-pack")) return undefined
      return { kind: "git", service, endpoint: "info/refs" }
    }
    if (method !== "POST") return undefined
    return { kind: "git", service: git[3] as "git-upload-pack" | "git-receive-pack", endpoint: "rpc" }
  }
  const api = API.exec(url.pathname)
  if (api === null || `${api[1]}/${api[2]}`.toLowerCase() !== repository) return undefined
  const rest = api[3] ?? ""
  if (!apiAllowlist.some(([m, pattern]) => m === method && pattern.test(rest))) return undefined
  for (const name of url.searchParams.keys()) if (!allowedQueryParameters.has(name)) return undefined
  return { kind: "api", upstreamPath: `/repos/${repository}${rest}${url.search}` }
}
