/**
 * A client of a running OpenClaw gateway's own WebSocket RPC (the protocol its CLI and Control UI
 * speak). It connects as an operator backend client: waits for `connect.challenge`, signs it with
 * an Ed25519 device key (v3 payload over the gateway token), sends `connect` with the token and
 * the asked scopes, then serves calls over the one connection until its scope closes.
 *
 * The gateway pairs a new device key silently only when the client is local to it (a loopback
 * connection without forwarding headers); from elsewhere it answers `NOT_PAIRED` until the device is approved (on
 * `kubernetes` by the Pod's `pairing` container, for the service's own device only: see
 * docs/decisions/kubernetes.md "Device pairing"). The token only travels in the `connect` frame,
 * never in a header.
 */
import { Data, Duration, Effect, type Scope } from "effect"
import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, hkdfSync, type KeyObject, sign } from "node:crypto"
import { WebSocket } from "ws"

/** Why a gateway RPC did not produce an answer. `sent`: a request was on the wire (its outcome is unknown). */
export class GatewayRpcError extends Data.TaggedError("GatewayRpcError")<{
  readonly reason: "unreachable" | "refused" | "closed" | "timeout"
  readonly sent: boolean
  readonly detail: string
  /** The gateway's error code when it refused the connect (e.g. `NOT_PAIRED`). */
  readonly code?: string | undefined
}> {}

/** One answer frame: `ok` with `payload`, or not `ok` with `error`. */
export interface RpcAnswer {
  readonly id: string
  readonly ok: boolean
  readonly payload?: unknown
  readonly error?: { readonly code?: string; readonly message?: string }
}

/** The key a client signs the gateway's challenge with; the gateway pairs it on first connect. */
export interface DeviceIdentity {
  readonly id: string
  readonly publicKey: string
  readonly privateKey: KeyObject
}

const identityOf = (publicKey: KeyObject, privateKey: KeyObject): DeviceIdentity => {
  const raw = publicKey.export({ format: "der", type: "spki" }).subarray(-32)
  return { id: createHash("sha256").update(raw).digest("hex"), publicKey: raw.toString("base64url"), privateKey }
}

export const makeDeviceIdentity = (): DeviceIdentity => {
  const { publicKey, privateKey } = generateKeyPairSync("ed25519")
  return identityOf(publicKey, privateKey)
}

/** PKCS#8 DER of an Ed25519 private key, up to its 32-byte seed (RFC 8410). */
const ED25519_PKCS8_PREFIX = Buffer.from("302e020100300506032b657004220420", "hex")
/** The HKDF label of the service's gateway device key; changing it re-pairs every gateway. */
export const SERVICE_DEVICE_LABEL = "svc/gateway-device/v1"

/**
 * The service's stable device identity: an Ed25519 key whose seed is HKDF-SHA256 of `secretKey`
 * (`SVC_SECRET_KEY`, which every API and worker process of an Installation holds) under a fixed
 * label, so all of them are one device to the gateways. The id and public key are not secret.
 */
export const deviceIdentityFromSecret = (secretKey: Uint8Array): DeviceIdentity => {
  const seed = Buffer.from(hkdfSync("sha256", secretKey, Buffer.alloc(0), SERVICE_DEVICE_LABEL, 32))
  const privateKey = createPrivateKey({ key: Buffer.concat([ED25519_PKCS8_PREFIX, seed]), format: "der", type: "pkcs8" })
  return identityOf(createPublicKey(privateKey), privateKey)
}

export interface GatewayEndpoint {
  readonly url: string
  readonly token: string
  /** Headers of the WebSocket upgrade (tests: what a cluster client's request carries, over loopback). */
  readonly headers?: Readonly<Record<string, string>> | undefined
}

export interface SessionOptions {
  readonly scopes: ReadonlyArray<string>
  readonly device?: DeviceIdentity | undefined
  /** The longest the connection and the handshake may take (default 15 s). */
  readonly connectTimeout?: Duration.DurationInput | undefined
  /** The longest one call waits for its answer (default 30 s). */
  readonly callTimeout?: Duration.DurationInput | undefined
  readonly client?: { readonly version: string; readonly platform: string } | undefined
}

export interface GatewaySession {
  readonly call: (method: string, params?: Readonly<Record<string, unknown>>) => Effect.Effect<RpcAnswer, GatewayRpcError>
}

const CLIENT_ID = "gateway-client"
const CLIENT_MODE = "backend"

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value)

const parseFrame = (data: unknown): Record<string, unknown> | undefined => {
  try {
    const frame: unknown = JSON.parse(String(data))
    return isRecord(frame) ? frame : undefined
  } catch {
    return undefined
  }
}

const errorText = (error: unknown) =>
  isRecord(error) ? `${String(error["code"] ?? "")}: ${String(error["message"] ?? "")}` : "no error given"

/** An authenticated connection to the gateway at `endpoint`, closed with its scope. */
export const gatewaySession = (
  endpoint: GatewayEndpoint,
  options: SessionOptions
): Effect.Effect<GatewaySession, GatewayRpcError, Scope.Scope> => {
  const device = options.device ?? makeDeviceIdentity()
  const client = { id: CLIENT_ID, mode: CLIENT_MODE, version: options.client?.version ?? "svc", platform: options.client?.platform ?? process.platform }
  const pending = new Map<string, (result: Effect.Effect<RpcAnswer, GatewayRpcError>) => void>()
  let closed: GatewayRpcError | undefined
  let counter = 0

  const connect = Effect.async<WebSocket, GatewayRpcError>((resume) => {
    const url = new URL(endpoint.url)
    url.protocol = url.protocol === "https:" ? "wss:" : "ws:"
    const socket = new WebSocket(url.toString(), {
      perMessageDeflate: false,
      followRedirects: false,
      ...(endpoint.headers === undefined ? {} : { headers: { ...endpoint.headers } })
    })
    // `connected`: this attempt has resumed; `established`: its connect was accepted (only then
    // does a loss end the session: a refused attempt's own close must not, as a retry may follow).
    let connected = false
    let established = false
    const lose = (reason: GatewayRpcError["reason"], detail: string, code?: string) => {
      if (!connected) {
        connected = true
        socket.terminate()
        return resume(Effect.fail(new GatewayRpcError({ reason, sent: false, detail, code })))
      }
      if (!established) return
      closed ??= new GatewayRpcError({ reason: "closed", sent: false, detail })
      for (const [, answer] of pending) answer(Effect.fail(new GatewayRpcError({ reason: "closed", sent: true, detail })))
      pending.clear()
    }
    socket.on("error", (error) => lose("unreachable", error.message))
    // The gateway may close (1008, "pairing required…") before its NOT_PAIRED answer is read.
    socket.on("close", (code, reason) =>
      code === 1008 && reason.toString("utf8").startsWith("pairing required")
        ? lose("refused", `connect refused (NOT_PAIRED: ${reason.toString("utf8")})`, "NOT_PAIRED")
        : lose("closed", `socket closed (${code})`))
    socket.on("message", (data) => {
      const frame = parseFrame(data)
      if (frame === undefined) return
      if (frame["type"] === "event" && frame["event"] === "connect.challenge" && isRecord(frame["payload"])) {
        const { nonce, ts } = frame["payload"]
        const signed = ["v3", device.id, client.id, client.mode, "operator", options.scopes.join(","), String(ts), endpoint.token, String(nonce), client.platform, ""]
        const signature = sign(null, Buffer.from(signed.join("|"), "utf8"), device.privateKey).toString("base64url")
        socket.send(JSON.stringify({
          type: "req", id: "connect", method: "connect",
          params: {
            minProtocol: 4, maxProtocol: 4, client, role: "operator", scopes: options.scopes, caps: [],
            auth: { token: endpoint.token },
            device: { id: device.id, publicKey: device.publicKey, signature, signedAt: ts, nonce }
          }
        }))
      } else if (frame["type"] === "res" && frame["id"] === "connect" && !connected) {
        if (frame["ok"] !== true) {
          const code = isRecord(frame["error"]) && typeof frame["error"]["code"] === "string" ? frame["error"]["code"] : undefined
          return lose("refused", `connect refused (${errorText(frame["error"])})`, code)
        }
        connected = true
        established = true
        resume(Effect.succeed(socket))
      } else if (frame["type"] === "res" && typeof frame["id"] === "string") {
        const answer = pending.get(frame["id"])
        pending.delete(frame["id"])
        answer?.(Effect.succeed({ id: frame["id"], ok: frame["ok"] === true, payload: frame["payload"], error: frame["error"] } as RpcAnswer))
      }
    })
    // Interrupted (the connect timeout): the socket's own close must not resume again.
    return Effect.sync(() => {
      connected = true
      socket.terminate()
    })
  }).pipe(
    // Acquisition is uninterruptible: without this the timeout would wait for the handshake.
    Effect.interruptible,
    Effect.timeoutFail({
      duration: options.connectTimeout ?? Duration.seconds(15),
      onTimeout: () => new GatewayRpcError({ reason: "timeout", sent: false, detail: "no connect answer in time" })
    })
  )

  const session = (socket: WebSocket): GatewaySession => ({
    call: (method, params) =>
      Effect.async<RpcAnswer, GatewayRpcError>((resume) => {
        if (closed !== undefined) return resume(Effect.fail(closed))
        const id = `r${++counter}`
        pending.set(id, resume)
        socket.send(JSON.stringify({ type: "req", id, method, params: params ?? {} }))
        return Effect.sync(() => pending.delete(id))
      }).pipe(
        Effect.timeoutFail({
          duration: options.callTimeout ?? Duration.seconds(30),
          onTimeout: () => new GatewayRpcError({ reason: "timeout", sent: true, detail: `no answer to ${method} in time` })
        })
      )
  })

  return Effect.acquireRelease(connect, (socket) => Effect.sync(() => socket.terminate())).pipe(Effect.map(session))
}
