/**
 * A loopback implementation of the model vendor's workspace Admin API (UPSTREAMS.md), for the
 * ServiceAccount Driver under test: bearer admin key, one workspace, service accounts and their
 * credentials, the vendor's error bodies. Its state outlives `restart()` (the vendor is durable),
 * and faults can be queued per route: an error status, a slow answer, or a lost answer (the
 * upstream acts, then the connection is closed without a response).
 *
 * The account list is paginated the vendor's way: `limit` (1-100, default 20) and an opaque
 * `page` cursor taken from the previous answer's `next_page`; it has no name filter (UPSTREAMS.md
 * names none), so a client that looks an account up by name must read the pages itself.
 */
import { randomBytes, randomUUID } from "node:crypto"
import * as http from "node:http"
import type { AddressInfo } from "node:net"

export interface VendorAccount {
  readonly id: string
  readonly name: string
  readonly workspace_id: string
  readonly enabled: boolean
}

export interface VendorCredential {
  readonly id: string
  readonly service_account_id: string
  readonly name: string
  readonly access_token: string
  readonly ttl: number
  readonly scopes: ReadonlyArray<string>
  readonly expires_at: string
}

export interface VendorRequest {
  readonly method: string
  readonly path: string
  readonly body: unknown
}

/** Which requests a fault applies to: method and a path pattern (`:id` matches one segment). */
export type Route =
  | "create-account"
  | "list-accounts"
  | "delete-account"
  | "issue-credential"
  | "delete-credential"

export type Fault =
  | { readonly kind: "status"; readonly status: number; readonly code: string }
  | { readonly kind: "slow"; readonly delayMs: number }
  | { readonly kind: "lost" }
  /** The upstream waits for `release` before acting: a test orders a concurrent request in between. */
  | { readonly kind: "held"; readonly release: Promise<void> }

export interface ModelVendorAdmin {
  /** `http://127.0.0.1:<port>`: what `SVC_DEV_UPSTREAMS` maps the vendor's fixed origin to. */
  readonly origin: string
  readonly workspaceId: string
  readonly accounts: () => ReadonlyArray<VendorAccount>
  readonly credentials: () => ReadonlyArray<VendorCredential>
  readonly requests: () => ReadonlyArray<VendorRequest>
  /** The next matching request meets `fault` (faults queue in order). */
  readonly failNext: (route: Route, fault: Fault) => void
  /** Which admin key the upstream accepts from now on (a rotated key). */
  readonly rotateKey: (key: string) => void
  /** Stops listening and listens again on the same port; state is kept. */
  readonly restart: () => Promise<void>
  /** Stops listening (until `restart`): requests are refused. */
  readonly stop: () => Promise<void>
  readonly close: () => Promise<void>
}

const json = (res: http.ServerResponse, status: number, body: unknown) => {
  const text = JSON.stringify(body)
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) })
  res.end(text)
}

const vendorError = (res: http.ServerResponse, status: number, code: string, message = code.replace(/_/g, " ")) =>
  json(res, status, { error: { code, message } })

const readBody = (req: http.IncomingMessage): Promise<unknown> =>
  new Promise((resolve) => {
    let text = ""
    req.setEncoding("utf8")
    req.on("data", (chunk: string) => (text += chunk))
    req.on("end", () => {
      try {
        resolve(text === "" ? undefined : JSON.parse(text))
      } catch {
        resolve(text)
      }
    })
  })

const routeOf = (method: string, rest: ReadonlyArray<string>): Route | undefined => {
  if (rest.length === 0) return method === "POST" ? "create-account" : method === "GET" ? "list-accounts" : undefined
  if (rest.length === 1 && method === "DELETE") return "delete-account"
  if (rest.length === 2 && rest[1] === "credentials" && method === "POST") return "issue-credential"
  if (rest.length === 3 && rest[1] === "credentials" && method === "DELETE") return "delete-credential"
  return undefined
}

export const startModelVendorAdmin = async (options: { readonly adminKey: string; readonly workspaceId: string }): Promise<ModelVendorAdmin> => {
  let adminKey = options.adminKey
  const accounts = new Map<string, VendorAccount>()
  const credentials = new Map<string, VendorCredential>()
  const requests: Array<VendorRequest> = []
  const faults: Array<{ route: Route; fault: Fault }> = []
  const sockets = new Set<import("node:net").Socket>()

  const act = (route: Route, rest: ReadonlyArray<string>, body: unknown, res: http.ServerResponse, query: URLSearchParams) => {
    const accountId = rest[0] ?? ""
    const fields = typeof body === "object" && body !== null ? body as Record<string, unknown> : {}
    switch (route) {
      case "list-accounts": {
        const limit = Number(query.get("limit") ?? "20")
        const page = query.get("page")
        const offset = page === null ? 0 : Number(Buffer.from(page, "base64url").toString("utf8").replace(/^offset:/, ""))
        if (!Number.isInteger(limit) || limit < 1 || limit > 100 || !Number.isInteger(offset) || offset < 0) {
          return vendorError(res, 400, "invalid_request")
        }
        const all = [...accounts.values()]
        const next = offset + limit < all.length ? Buffer.from(`offset:${offset + limit}`).toString("base64url") : null
        return json(res, 200, { data: all.slice(offset, offset + limit), next_page: next })
      }
      case "create-account": {
        if (typeof fields.name !== "string" || fields.name.length === 0) return vendorError(res, 400, "invalid_request")
        const account = { id: `vsa_${randomUUID()}`, name: fields.name, workspace_id: options.workspaceId, enabled: true }
        accounts.set(account.id, account)
        return json(res, 201, { id: account.id, workspace_id: account.workspace_id, enabled: true })
      }
      case "delete-account": {
        if (!accounts.delete(accountId)) return vendorError(res, 404, "service_account_not_found")
        for (const [id, credential] of credentials) if (credential.service_account_id === accountId) credentials.delete(id)
        return json(res, 200, { id: accountId, deleted: true })
      }
      case "issue-credential": {
        if (!accounts.has(accountId)) return vendorError(res, 404, "service_account_not_found")
        if (typeof fields.name !== "string" || typeof fields.ttl !== "number" || !Array.isArray(fields.scopes)) {
          return vendorError(res, 400, "invalid_request")
        }
        const credential: VendorCredential = {
          id: `vcred_${randomUUID()}`,
          service_account_id: accountId,
          name: fields.name,
          access_token: `vat_${randomBytes(24).toString("base64url")}`,
          ttl: fields.ttl,
          scopes: fields.scopes as ReadonlyArray<string>,
          expires_at: new Date(Date.now() + fields.ttl * 1000).toISOString()
        }
        credentials.set(credential.id, credential)
        const { name: _name, ttl: _ttl, ...answer } = credential
        return json(res, 201, { ...answer, workspace_id: options.workspaceId })
      }
      case "delete-credential": {
        const credential = credentials.get(rest[2] ?? "")
        if (credential === undefined || credential.service_account_id !== accountId) {
          return vendorError(res, 404, "credential_not_found")
        }
        credentials.delete(credential.id)
        return json(res, 200, { id: credential.id, deleted: true })
      }
    }
  }

  const handle = async (req: http.IncomingMessage, res: http.ServerResponse) => {
    const url = new URL(req.url ?? "/", "http://vendor")
    const body = await readBody(req)
    const method = req.method ?? "GET"
    requests.push({ method, path: url.pathname + url.search, body })
    if (req.headers.authorization !== `Bearer ${adminKey}`) return vendorError(res, 401, "invalid_api_key")
    const match = /^\/v1\/manage\/workspaces\/([^/]+)\/service-accounts((?:\/[^/]+)*)$/.exec(url.pathname)
    const rest = match?.[2]?.split("/").filter((s) => s !== "") ?? []
    const route = match === null ? undefined : routeOf(method, rest)
    if (match === null || route === undefined) return vendorError(res, 404, "not_found")
    if (match[1] !== options.workspaceId) return vendorError(res, 404, "workspace_not_found")
    const index = faults.findIndex((f) => f.route === route)
    const fault = index === -1 ? undefined : faults.splice(index, 1)[0]!.fault
    if (fault?.kind === "status") return vendorError(res, fault.status, fault.code)
    if (fault?.kind === "slow") await new Promise((resolve) => setTimeout(resolve, fault.delayMs))
    if (fault?.kind === "held") await fault.release
    if (fault?.kind === "lost") {
      // The upstream acts, and its answer never arrives.
      act(route, rest, body, new http.ServerResponse(req), url.searchParams)
      req.socket.destroy()
      return
    }
    // A caller that gave up does not stop the upstream from acting.
    act(route, rest, body, req.socket.destroyed ? new http.ServerResponse(req) : res, url.searchParams)
  }

  const server = http.createServer((req, res) => void handle(req, res))
  server.on("connection", (socket) => {
    sockets.add(socket)
    socket.on("close", () => sockets.delete(socket))
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = (server.address() as AddressInfo).port

  const stop = () =>
    new Promise<void>((resolve) => {
      if (!server.listening) return resolve()
      for (const socket of sockets) socket.destroy()
      server.close(() => resolve())
    })

  return {
    origin: `http://127.0.0.1:${port}`,
    workspaceId: options.workspaceId,
    accounts: () => [...accounts.values()],
    credentials: () => [...credentials.values()],
    requests: () => [...requests],
    failNext: (route, fault) => void faults.push({ route, fault }),
    rotateKey: (key) => void (adminKey = key),
    restart: async () => {
      await stop()
      await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve))
    },
    stop,
    close: stop
  }
}
