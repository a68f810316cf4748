/**
 * The model credential proxy of dedicated execution (`svc harness`; docs/decisions/kubernetes.md
 * "Dedicated execution"). It listens on the Pod's loopback, takes the gateway's model calls at
 * `/providers/<id>/<rest>`, and forwards each to `<the provider's original baseUrl>/<rest>`
 * with the credential added: `Authorization: Bearer <token>` (direct_token), plus the
 * workspace header for a managed access token (provider_service_account), or, for
 * credential_source, through the Credential Gateway's egress with the source's placeholder, which
 * the egress swaps for the key. Whatever credential the gateway sent (the placeholder) is
 * dropped. Bodies and answers are streamed as they come. A provider it does not know answers
 * 404 `unknown_provider`; an unreachable upstream 502 `upstream_unreachable`. Its log lines name
 * the provider, method and status, never a header.
 */
import * as http from "node:http"
import * as https from "node:https"
import { HarnessVariables, WORKSPACE_HEADER } from "@svc/core/drivers/compute"

export type HarnessCredential =
  | { readonly kind: "bearer"; readonly token: string; readonly workspaceId?: string | undefined }
  | { readonly kind: "egress"; readonly proxy: URL; readonly placeholder: string }

export interface HarnessConfig {
  readonly host: string
  readonly port: number
  /** Provider id to its original base URL. */
  readonly upstreams: Readonly<Record<string, string>>
  readonly credential: HarnessCredential
  readonly log?: ((line: Record<string, unknown>) => void) | undefined
}

/** Why the environment cannot configure the proxy, or its configuration. */
export const harnessConfigFrom = (env: NodeJS.ProcessEnv): HarnessConfig | string => {
  const [host, port] = (env[HarnessVariables.listen] ?? "127.0.0.1:18790").split(":")
  let upstreams: unknown
  try {
    upstreams = JSON.parse(env[HarnessVariables.upstreams] ?? "{}")
  } catch {
    return `${HarnessVariables.upstreams} is not JSON`
  }
  if (typeof upstreams !== "object" || upstreams === null || Object.values(upstreams).some((url) => typeof url !== "string")) {
    return `${HarnessVariables.upstreams} must map provider ids to base URLs`
  }
  const method = env[HarnessVariables.method]
  const token = env[HarnessVariables.token]
  const base = { host: host ?? "127.0.0.1", port: Number(port), upstreams: upstreams as Record<string, string> }
  if (!Number.isInteger(base.port) || base.port <= 0 || base.port > 65535) return `${HarnessVariables.listen} has no valid port`
  if (method === "direct_token" || method === "provider_service_account") {
    if (token === undefined || token === "") return `${HarnessVariables.token} is missing`
    const workspaceId = method === "provider_service_account" ? env[HarnessVariables.workspaceId] : undefined
    return { ...base, credential: { kind: "bearer", token, workspaceId: workspaceId === "" ? undefined : workspaceId } }
  }
  if (method === "credential_source") {
    const egress = env[HarnessVariables.egress]
    const placeholder = env[HarnessVariables.placeholder]
    if (egress === undefined || !URL.canParse(egress) || placeholder === undefined) {
      return `${HarnessVariables.egress} and ${HarnessVariables.placeholder} are needed for credential_source`
    }
    return { ...base, credential: { kind: "egress", proxy: new URL(egress), placeholder } }
  }
  return `${HarnessVariables.method} must be direct_token, provider_service_account or credential_source`
}

/** Headers never forwarded: hop-by-hop ones and every credential the gateway may have sent. */
const DROPPED = new Set([
  "host", "connection", "keep-alive", "proxy-connection", "transfer-encoding", "te", "trailer", "upgrade",
  "proxy-authorization", "authorization", "x-api-key", "api-key", WORKSPACE_HEADER
])

const forwardable = (headers: http.IncomingHttpHeaders): http.OutgoingHttpHeaders =>
  Object.fromEntries(Object.entries(headers).filter(([name]) => !DROPPED.has(name.toLowerCase())))

const answer = (res: http.ServerResponse, status: number, code: string, message: string) => {
  const text = JSON.stringify({ error: { message, type: "invalid_request_error", code } })
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) })
  res.end(text)
}

const PROVIDER_PATH = /^\/providers\/([^/]+)(\/.*)?$/

/** Where a request goes and with which headers; `undefined` for a provider it does not know. */
const route = (config: HarnessConfig, req: http.IncomingMessage) => {
  const url = new URL(req.url ?? "/", "http://harness")
  const match = PROVIDER_PATH.exec(url.pathname)
  const provider = match === null ? undefined : decodeURIComponent(match[1]!)
  const base = provider !== undefined && Object.hasOwn(config.upstreams, provider) ? config.upstreams[provider] : undefined
  if (provider === undefined || base === undefined) return { provider }
  const target = new URL(`${base.replace(/\/+$/, "")}${match?.[2] ?? ""}${url.search}`)
  const credential = config.credential
  const headers: http.OutgoingHttpHeaders = { ...forwardable(req.headers), host: target.host }
  if (credential.kind === "bearer") {
    headers.authorization = `Bearer ${credential.token}`
    if (credential.workspaceId !== undefined) headers[WORKSPACE_HEADER] = credential.workspaceId
    return { provider, target, headers }
  }
  headers.authorization = `Bearer ${credential.placeholder}`
  return { provider, target, headers, proxy: credential.proxy }
}

const send = (
  target: URL,
  headers: http.OutgoingHttpHeaders,
  method: string,
  proxy: URL | undefined
): http.ClientRequest =>
  proxy === undefined
    ? (target.protocol === "https:" ? https : http).request(target, { method, headers })
    // Absolute-form request target, as to an HTTP forward proxy (the egress's contract).
    : http.request({ host: proxy.hostname, port: proxy.port, method, path: target.href, headers })

export const makeHarnessProxy = (config: HarnessConfig): http.Server => {
  const log = config.log ?? ((line) => console.log(JSON.stringify(line)))
  return http.createServer((req, res) => {
    if (req.method === "GET" && req.url === "/healthz") {
      res.writeHead(200, { "content-type": "application/json" })
      return res.end(JSON.stringify({ status: "ok" }))
    }
    const method = req.method ?? "GET"
    const routed = route(config, req)
    if (routed.target === undefined) {
      log({ level: "warn", message: "harness: unknown provider", provider: routed.provider ?? null, method })
      req.resume()
      return answer(res, 404, "unknown_provider", "The harness forwards only to the Agent's configured model providers.")
    }
    const upstream = send(routed.target, routed.headers, method, routed.proxy)
    upstream.on("response", (reply) => {
      const headers = Object.fromEntries(Object.entries(reply.headers).filter(([name]) => !DROPPED.has(name)))
      res.writeHead(reply.statusCode ?? 502, headers)
      reply.pipe(res)
      log({ level: "info", message: "harness: forwarded", provider: routed.provider, method, status: reply.statusCode ?? 0 })
    })
    upstream.on("error", () => {
      log({ level: "warn", message: "harness: upstream unreachable", provider: routed.provider, method })
      if (res.headersSent) res.destroy()
      else answer(res, 502, "upstream_unreachable", "The model provider could not be reached.")
    })
    res.on("close", () => {
      if (!res.writableFinished) upstream.destroy()
    })
    req.pipe(upstream)
  })
}

/** Starts the proxy; resolves once it listens. */
export const listenHarness = (config: HarnessConfig): Promise<http.Server> =>
  new Promise((resolve, reject) => {
    const server = makeHarnessProxy(config)
    server.once("error", reject)
    server.listen({ host: config.host, port: config.port }, () => resolve(server))
  })
