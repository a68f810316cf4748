/**
 * The client listener's request handler (DESIGN §12): authenticate the session bearer, keep
 * the request to the session's one repository and profile, and proxy it upstream with the
 * session's installation token. Raw Node streams, because Git packs are streamed both ways.
 */
import type { RepositoryProfileName } from "@svc/core/config"
import { CredentialServiceLimits as L } from "@svc/core/schema"
import type * as http from "node:http"
import { Readable } from "node:stream"
import { digestOf } from "../sessions/bearer.js"
import { UpstreamError } from "../upstream/codeHost.js"
import { SessionEnded } from "../upstream/tokenCache.js"
import { inflated, readLimited, refuse, responseLimited, type Surface } from "./bodies.js"
import { presentedBearer } from "./credentials.js"
import { type ExchangeSlots } from "./exchanges.js"
import { pushCommands, refAllowed } from "./pushCommands.js"
import { routeOf } from "./routes.js"

export interface ActiveSession {
  readonly id: string
  readonly repository: string
  readonly repositoryId: string
  readonly profile: RepositoryProfileName
  readonly pushRefAllowlist: ReadonlyArray<string> | null
}

export interface ListenerDeps {
  /** The active, unexpired session with this bearer digest. */
  readonly lookup: (bearerDigest: string) => Promise<ActiveSession | undefined>
  readonly tokenFor: (session: ActiveSession) => Promise<string>
  readonly gitOrigin: string
  readonly apiOrigin: string
  readonly listenerUrl: string
  readonly slots: ExchangeSlots
  /** SPEC 8's exchange total (5 minutes) in production; see listenerLimits in server.ts. */
  readonly exchangeLimitMs: number
  /** Logs an exchange cut off by a limit (never the bearer or the token). */
  readonly warn: (message: string, fields: Record<string, unknown>) => void
}

const surfaceOf = (url: URL): Surface => (url.pathname.startsWith("/api/") ? "api" : "git")

const forwardedHeaders = ["content-type", "content-encoding", "git-protocol", "accept"] as const

/** Removes `temp_clone_token` anywhere in a JSON document. */
const stripCloneTokens = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(stripCloneTokens)
  if (typeof value !== "object" || value === null) return value
  return Object.fromEntries(
    Object.entries(value).filter(([k]) => k !== "temp_clone_token").map(([k, v]) => [k, stripCloneTokens(v)])
  )
}

const proxyGit = async (
  deps: ListenerDeps, req: http.IncomingMessage, res: http.ServerResponse, signal: AbortSignal,
  session: ActiveSession, service: "git-upload-pack" | "git-receive-pack", endpoint: "info/refs" | "rpc"
) => {
  const pushing = service === "git-receive-pack"
  if (pushing && session.profile === "git-read") return refuse(res, "git", 403, "this session's profile git-read cannot push")
  let body: Buffer | undefined
  if (endpoint === "rpc") {
    body = await readLimited(req, pushing ? L.gitPushInputBytes : L.gitFetchInputBytes)
    if (body === undefined) return refuse(res, "git", 413, "the request body is larger than the credential service allows")
    if (pushing && session.pushRefAllowlist !== null) {
      const plain = inflated(body, req.headers["content-encoding"], L.gitPushInputBytes)
      const commands = plain === undefined ? { problem: "the request body cannot be read" } : pushCommands(plain)
      if ("problem" in commands) return refuse(res, "git", 403, `push refused: ${commands.problem}`)
      const outside = commands.refs.find((ref) => !refAllowed(session.pushRefAllowlist!, ref))
      if (outside !== undefined) return refuse(res, "git", 403, `push refused: ${outside} is outside this session's pushRefAllowlist`)
    }
  }
  const token = await deps.tokenFor(session)
  const headers: Record<string, string> = {
    authorization: `Basic ${Buffer.from(`x-access-token:${token}`).toString("base64")}`,
    "user-agent": "svc-credential-service"
  }
  for (const name of forwardedHeaders) {
    const value = req.headers[name]
    if (typeof value === "string") headers[name] = value
  }
  const path = endpoint === "rpc" ? `/${session.repository}.git/${service}` : `/${session.repository}.git/info/refs?service=${service}`
  const upstream = await fetch(`${deps.gitOrigin}${path}`, {
    method: req.method ?? "GET",
    headers,
    ...(body === undefined ? {} : { body }),
    redirect: "error",
    signal
  })
  const out: Record<string, string> = {}
  for (const name of ["content-type", "cache-control", "expires", "pragma"]) {
    const value = upstream.headers.get(name)
    if (value !== null) out[name] = value
  }
  if (upstream.status === 401 || upstream.status === 403) {
    await upstream.body?.cancel()
    return refuse(res, "git", 502, "the code host refused the credential service's token")
  }
  const outputLimited = () =>
    deps.warn("Git output cut off at its size limit", { sessionId: session.id, limitBytes: L.gitOutputBytes })
  // A declared length over the limit is refused before anything is sent, like an API answer.
  if (Number(upstream.headers.get("content-length") ?? "0") > L.gitOutputBytes) {
    await upstream.body?.cancel()
    outputLimited()
    return refuse(res, "git", 502, "the code host's response is larger than the credential service allows")
  }
  res.writeHead(upstream.status, out)
  if (upstream.body === null) return void res.end()
  // Past this point the status is sent: a stream that passes the limit can only be cut, and the
  // chunk that would pass it is never forwarded, so a client sees at most the limit and no clean end.
  let sent = 0
  const stream = Readable.fromWeb(upstream.body as import("node:stream/web").ReadableStream<Uint8Array>)
  stream.on("data", (chunk: Buffer) => {
    sent += chunk.length
    if (sent > L.gitOutputBytes) {
      outputLimited()
      stream.destroy()
      res.destroy()
    }
  })
  stream.pipe(res)
  await new Promise<void>((resolve) => {
    res.on("close", resolve)
    stream.on("error", () => {
      res.destroy()
      resolve()
    })
  })
}

const proxyApi = async (
  deps: ListenerDeps, req: http.IncomingMessage, res: http.ServerResponse, signal: AbortSignal,
  session: ActiveSession, upstreamPath: string
) => {
  const body = req.method === "GET" ? undefined : await readLimited(req, L.apiInputBytes)
  if (req.method !== "GET" && body === undefined) return refuse(res, "api", 413, "the request body is larger than the credential service allows")
  const token = await deps.tokenFor(session)
  const upstream = await fetch(`${deps.apiOrigin}${upstreamPath}`, {
    method: req.method ?? "GET",
    headers: {
      authorization: `token ${token}`,
      accept: typeof req.headers.accept === "string" ? req.headers.accept : "application/vnd.github+json",
      "user-agent": "svc-credential-service",
      ...(body === undefined ? {} : { "content-type": "application/json" })
    },
    ...(body === undefined ? {} : { body }),
    redirect: "error",
    signal
  })
  // Read up to the limit only: a larger (or endless) answer is abandoned, never buffered whole.
  const raw = await responseLimited(upstream, L.apiResponseBytes, signal)
  if (raw === undefined) {
    deps.warn("API answer refused at its size limit", { sessionId: session.id, limitBytes: L.apiResponseBytes })
    return refuse(res, "api", 502, "the code host's response is larger than the credential service allows")
  }
  let text = raw.toString("utf8")
  if ((upstream.headers.get("content-type") ?? "").includes("json") && text.length > 0) {
    try {
      text = JSON.stringify(stripCloneTokens(JSON.parse(text)))
    } catch {
      return refuse(res, "api", 502, "the code host's response is not valid JSON")
    }
  }
  const headers: Record<string, string> = { "content-type": upstream.headers.get("content-type") ?? "application/json" }
  const link = upstream.headers.get("link")
  if (link !== null) headers.link = link.split(deps.apiOrigin).join(`${deps.listenerUrl}/api/v3`)
  res.writeHead(upstream.status, headers)
  res.end(text)
}

export const makeHandler = (deps: ListenerDeps) => async (req: http.IncomingMessage, res: http.ServerResponse) => {
  const url = new URL(req.url ?? "/", "http://listener")
  const surface = surfaceOf(url)
  if (req.rawHeaders.length / 2 > L.headerPairs) return refuse(res, surface, 431, "the request has too many header fields")
  if ((req.url ?? "").length > L.requestTargetBytes) return refuse(res, surface, 414, "the request target is too long")
  const bearer = presentedBearer(req.headers)
  if (bearer === undefined) return refuse(res, surface, 401, "authentication required")
  const session = await deps.lookup(digestOf(bearer))
  if (session === undefined) return refuse(res, surface, 401, "the session is closed, expired or unknown")
  const route = routeOf(req.method ?? "GET", url, session.repository)
  if (route === undefined) return refuse(res, surface, 404, "not available through this session")
  const release = deps.slots.acquire(session.id)
  if (release === undefined) return refuse(res, surface, 503, "too many concurrent requests; try again")
  // The exchange ends at its time limit or when the client goes away, whichever is first, and
  // its slot comes back then: neither a code host that does not answer, nor a mint waiting in
  // the provider queue, nor a client that uploads slowly holds it longer.
  const gone = new AbortController()
  const overtime = new AbortController()
  res.on("close", () => {
    gone.abort()
    release()
  })
  const timer = setTimeout(() => {
    deps.warn("exchange cut off at its time limit", { sessionId: session.id, limitMs: deps.exchangeLimitMs })
    if (res.headersSent) res.destroy()
    else refuse(res, surface, 504, "the exchange took longer than the credential service allows")
    overtime.abort()
    release()
  }, deps.exchangeLimitMs)
  const signal = AbortSignal.any([overtime.signal, gone.signal])
  try {
    if (route.kind === "git") await proxyGit(deps, req, res, signal, session, route.service, route.endpoint)
    else await proxyApi(deps, req, res, signal, session, route.upstreamPath)
  } catch (error) {
    if (signal.aborted) return
    if (error instanceof SessionEnded) refuse(res, surface, 401, "the session is closed, expired or unknown")
    else if (error instanceof UpstreamError && error.busy === true) refuse(res, surface, 503, "the credential service is busy; try again")
    else if (error instanceof UpstreamError && error.timedOut === true) refuse(res, surface, 504, "the code host did not answer in time")
    else refuse(res, surface, 502, "the code host could not be reached")
  } finally {
    clearTimeout(timer)
    release()
  }
}
