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
 * the provider, method and status, never a header. Configured by `harnessConfig` (the
 * container's environment; the credential read as a redacted value).
 */
import * as http from "node:http"
import * as https from "node:https"
import { HARNESS_HOST, HARNESS_PORT, HarnessVariables, WORKSPACE_HEADER } from "@svc/core/drivers/compute"
import { Config, ConfigError, Effect, Either, Option, Redacted } from "effect"

export type HarnessCredential =
  | { readonly kind: "bearer"; readonly token: Redacted.Redacted<string>; readonly workspaceId?: string | undefined }
  | { readonly kind: "egress"; readonly proxy: URL; readonly placeholder: string }

export interface HarnessConfig {
  readonly host: string
  readonly port: number
  /** Provider id to its original base URL. */
  readonly upstreams: Readonly<Record<string, string>>
  readonly credential: HarnessCredential
  readonly log?: ((line: Record<string, unknown>) => void) | undefined
}

const Listen = Config.string(HarnessVariables.listen).pipe(
  Config.mapOrFail((text) => {
    const match = /^([^:]+):(\d{1,5})$/.exec(text)
    const port = Number(match?.[2])
    return match !== null && port > 0 && port <= 65535
      ? Either.right({ host: match[1]!, port })
      : Either.left(ConfigError.InvalidData([], "must be host:port"))
  }),
  Config.withDefault({ host: HARNESS_HOST, port: HARNESS_PORT })
)

const Upstreams = Config.string(HarnessVariables.upstreams).pipe(
  Config.mapOrFail((text) => {
    try {
      const value: unknown = JSON.parse(text)
      if (typeof value === "object" && value !== null && !Array.isArray(value) && Object.values(value).every((url) => typeof url === "string")) {
        return Either.right(value as Record<string, string>)
      }
    } catch {
      // reported below
    }
    return Either.left(ConfigError.InvalidData([], "must be a JSON object of provider ids to base URLs"))
  })
)

const Method = Config.literal("direct_token", "provider_service_account", "credential_source")(HarnessVariables.method)

/** The proxy's configuration from its container's environment (`HarnessVariables`). */
export const harnessConfig: Effect.Effect<HarnessConfig, ConfigError.ConfigError> = Effect.gen(function* () {
  const { host, port } = yield* Listen
  const upstreams = yield* Upstreams
  const method = yield* Method
  if (method === "credential_source") {
    const proxy = yield* Config.url(HarnessVariables.egress)
    const placeholder = yield* Config.string(HarnessVariables.placeholder)
    return { host, port, upstreams, credential: { kind: "egress", proxy, placeholder } }
  }
  const token = yield* Config.redacted(HarnessVariables.token)
  const workspaceId = method === "provider_service_account"
    ? Option.getOrUndefined(yield* Config.option(Config.nonEmptyString(HarnessVariables.workspaceId)))
    : undefined
  return { host, port, upstreams, credential: { kind: "bearer", token, workspaceId } }
})

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
    headers.authorization = `Bearer ${Redacted.value(credential.token)}`
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
  const log = config.log ?? (() => undefined)
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

/** The proxy, listening for as long as the scope lasts. */
export const listenHarness = (config: HarnessConfig) =>
  Effect.acquireRelease(
    Effect.async<http.Server, Error>((resume) => {
      const server = makeHarnessProxy(config)
      server.once("error", (error) => resume(Effect.fail(error)))
      server.listen({ host: config.host, port: config.port }, () => resume(Effect.succeed(server)))
    }),
    (server) => Effect.async<void>((resume) => {
      server.closeAllConnections()
      server.close(() => resume(Effect.void))
    })
  )
