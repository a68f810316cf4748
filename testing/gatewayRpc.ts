/**
 * A minimal client of a running OpenClaw gateway's own WebSocket RPC (the protocol its CLI and
 * Control UI speak), for tests that must see what the gateway itself reports (e.g. `plugins.list`
 * with each plugin's runtime state). It connects as an operator over loopback the way a backend
 * client does: waits for `connect.challenge`, signs it with a fresh Ed25519 device key (v3
 * payload over the gateway token; loopback devices are paired automatically), asks for
 * `operator.read` only, then sends the given requests and resolves with their answers in order.
 */
import { Effect } from "effect"
import { createHash, generateKeyPairSync, sign } from "node:crypto"
import { WebSocket } from "ws"

export interface RpcRequest {
  readonly method: string
  readonly params?: Readonly<Record<string, unknown>>
}

/** One answer frame: `ok` with `payload`, or not `ok` with `error`. */
export interface RpcAnswer {
  readonly id: string
  readonly ok: boolean
  readonly payload?: unknown
  readonly error?: { readonly code?: string; readonly message?: string }
}

const CLIENT = { id: "gateway-client", version: "test", platform: "test", mode: "backend" } as const
const SCOPES = ["operator.read"]

/** Sends `requests` over one authenticated connection; fails when the gateway refuses the connect. */
export const gatewayRpc = (
  endpoint: { readonly url: string; readonly token: string },
  requests: ReadonlyArray<RpcRequest>,
  timeoutMs = 60_000
): Effect.Effect<ReadonlyArray<RpcAnswer>, Error> =>
  Effect.async<ReadonlyArray<RpcAnswer>, Error>((resume) => {
    const { publicKey, privateKey } = generateKeyPairSync("ed25519")
    const raw = publicKey.export({ format: "der", type: "spki" }).subarray(-32)
    const deviceId = createHash("sha256").update(raw).digest("hex")
    const url = new URL(endpoint.url)
    url.protocol = url.protocol === "https:" ? "wss:" : "ws:"
    const socket = new WebSocket(url.toString(), { perMessageDeflate: false, followRedirects: false })
    const answers = new Map<string, RpcAnswer>()
    let settled = false
    const finish = (result: Effect.Effect<ReadonlyArray<RpcAnswer>, Error>) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      socket.terminate()
      resume(result)
    }
    const timer = setTimeout(() => finish(Effect.fail(new Error(`gateway RPC: no answer within ${timeoutMs} ms`))), timeoutMs)
    socket.on("error", (error) => finish(Effect.fail(new Error(`gateway RPC: ${String(error)}`))))
    socket.on("close", (code) => finish(Effect.fail(new Error(`gateway RPC: socket closed (${code})`))))
    socket.on("message", (data) => {
      const frame = JSON.parse(String(data)) as Record<string, unknown>
      if (frame["type"] === "event" && frame["event"] === "connect.challenge") {
        const { nonce, ts } = frame["payload"] as { nonce: string; ts: number }
        const signed = ["v3", deviceId, CLIENT.id, CLIENT.mode, "operator", SCOPES.join(","), String(ts), endpoint.token, nonce, CLIENT.platform, ""].join("|")
        const signature = sign(null, Buffer.from(signed, "utf8"), privateKey).toString("base64url")
        socket.send(JSON.stringify({
          type: "req", id: "connect", method: "connect",
          params: {
            minProtocol: 4, maxProtocol: 4, client: CLIENT, role: "operator", scopes: SCOPES, caps: [],
            auth: { token: endpoint.token },
            device: { id: deviceId, publicKey: raw.toString("base64url"), signature, signedAt: ts, nonce }
          }
        }))
      } else if (frame["type"] === "res" && frame["id"] === "connect") {
        if (frame["ok"] !== true) return finish(Effect.fail(new Error(`gateway RPC: connect refused (${JSON.stringify(frame["error"])})`)))
        if (requests.length === 0) return finish(Effect.succeed([]))
        requests.forEach((request, index) =>
          socket.send(JSON.stringify({ type: "req", id: `r${index}`, method: request.method, params: request.params ?? {} })))
      } else if (frame["type"] === "res") {
        answers.set(String(frame["id"]), frame as unknown as RpcAnswer)
        if (answers.size === requests.length) finish(Effect.succeed(requests.map((_, index) => answers.get(`r${index}`)!)))
      }
    })
    return Effect.sync(() => finish(Effect.fail(new Error("gateway RPC: interrupted"))))
  })

/** A plugin as `plugins.list` reports it: configured enablement and runtime state, separately. */
export interface ListedPlugin {
  readonly id: string
  readonly origin: string
  readonly enabled: boolean
  readonly version?: string
  readonly runtime: { readonly state: string; readonly error?: string }
}

/** The gateway's `plugins.list`, only the plugins the configuration loads (`origin: "config"`). */
export const configuredPlugins = (endpoint: { readonly url: string; readonly token: string }) =>
  gatewayRpc(endpoint, [{ method: "plugins.list" }]).pipe(
    Effect.flatMap(([answer]) =>
      answer?.ok === true
        ? Effect.succeed(((answer.payload as { plugins: ReadonlyArray<ListedPlugin> }).plugins).filter((plugin) => plugin.origin === "config"))
        : Effect.fail(new Error(`plugins.list refused: ${JSON.stringify(answer?.error)}`))))
