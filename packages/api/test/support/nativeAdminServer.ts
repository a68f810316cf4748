/**
 * The real API with native admin on (SPEC 5.8), and what its tests need: requests with an
 * explicit `Host` (fetch cannot set one) and a recording HTTP server on loopback standing where
 * a gateway would, reached through a Compute Driver whose `privateEndpoint` points at it.
 */
import { SqlClient } from "@effect/sql"
import { AuthSettings, nativeAdminPipeline } from "@svc/api"
import { defaultInstallationConfig, InstallationConfiguration, type NativeAdminConfig } from "@svc/core/config"
import { ComputeDriver, ComputeFailure, makeLocalCompute } from "@svc/core/drivers/compute"
import { Context, Effect, Layer } from "effect"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { WebSocketServer } from "ws"
import * as os from "node:os"
import { migratedDatabaseLayer } from "../../../../testing/database.js"
import { serveForTest } from "../../../../testing/server.js"
import { testSecretDriver } from "../../../../testing/drivers.js"

export const CONSOLE_ORIGIN = "http://console.example.test:8080"
export const NATIVE_ADMIN: NativeAdminConfig = { enabled: true, agentHostSuffix: "agents.example.test", cookieDomain: "example.test" }
export const settings = AuthSettings.from({ baseUrl: CONSOLE_ORIGIN, production: false, nativeAdmin: NATIVE_ADMIN })
export const GATEWAY_TOKEN = "gateway-token-of-the-recorder"

/** The host of an Agent: its ID without `agt_`, under the suffix. */
export const agentHost = (agentId: string) => `${agentId.slice("agt_".length)}.${NATIVE_ADMIN.agentHostSuffix}`

export interface HostResponse {
  readonly status: number
  readonly headers: http.IncomingHttpHeaders
  readonly text: string
  readonly body: any
}

/** One request to the server under test with an explicit Host header. */
export const hostRequest = (
  baseUrl: string,
  options: { readonly host: string; readonly path?: string; readonly method?: string; readonly headers?: Record<string, string>; readonly body?: string }
) =>
  Effect.async<HostResponse>((resume) => {
    const port = new URL(baseUrl).port
    const request = http.request({
      host: "127.0.0.1",
      port,
      agent: false,
      method: options.method ?? "GET",
      path: options.path ?? "/",
      headers: { ...options.headers, host: options.host }
    }, (response) => {
      const chunks: Array<Buffer> = []
      response.on("data", (chunk: Buffer) => chunks.push(chunk))
      response.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8")
        let body: unknown = text
        try {
          body = JSON.parse(text)
        } catch {
          // not JSON: keep the text
        }
        resume(Effect.succeed({ status: response.statusCode ?? 0, headers: response.headers, text, body }))
      })
    })
    request.on("error", (error) => resume(Effect.die(error)))
    request.end(options.body)
  })

export interface Recorded {
  readonly method: string
  readonly url: string
  readonly headers: http.IncomingHttpHeaders
}

/** A loopback HTTP server that records what reaches it; WebSockets are accepted and echo every message. */
export class Recorder extends Context.Tag("test/Recorder")<Recorder, {
  readonly url: string
  readonly requests: Array<Recorded>
  /** Agents whose "gateway" is this server (others have no private endpoint). */
  readonly gateways: Set<string>
  /** WebSocket messages as the gateway received them. */
  readonly messages: Array<string>
}>() {
  static readonly layer = Layer.scoped(
    Recorder,
    Effect.acquireRelease(
      Effect.async<{ server: http.Server; url: string; requests: Array<Recorded>; messages: Array<string>; gateways: Set<string> }>((resume) => {
        const requests: Array<Recorded> = []
        const messages: Array<string> = []
        const server = http.createServer((request, response) => {
          requests.push({ method: request.method!, url: request.url!, headers: request.headers })
          request.resume()
          request.on("end", () => {
            response.setHeader("set-cookie", "svc_shared.session_token=planted; Domain=example.test; Path=/")
            response.writeHead(200, { "content-type": "text/html; charset=utf-8" })
            response.end("<!doctype html><title>recorder</title>")
          })
        })
        // A WebSocket endpoint that records the messages it receives and echoes each back.
        const sockets = new WebSocketServer({ noServer: true })
        server.on("upgrade", (request, socket, head) => {
          requests.push({ method: request.method!, url: request.url!, headers: request.headers })
          sockets.handleUpgrade(request, socket, head, (ws) => {
            ws.on("message", (data, isBinary) => {
              messages.push(Buffer.isBuffer(data) ? data.toString("utf8") : String(data))
              ws.send(data, { binary: isBinary })
            })
          })
        })
        server.listen(0, "127.0.0.1", () => {
          const port = (server.address() as AddressInfo).port
          resume(Effect.succeed({ server, url: `http://127.0.0.1:${port}`, requests, messages, gateways: new Set<string>() }))
        })
      }),
      ({ server }) => Effect.async<void>((resume) => {
        server.closeAllConnections()
        server.close(() => resume(Effect.void))
      })
    )
  )
}

/** A `local` Compute Driver whose private endpoint is the recorder, for the Agents it lists. */
const recorderCompute = Layer.effect(
  ComputeDriver,
  Effect.map(Recorder, (recorder) => ({
    ...makeLocalCompute(os.tmpdir()),
    privateEndpoint: (ref) =>
      recorder.gateways.has(ref.agentId)
        ? Effect.succeed({ url: recorder.url, token: GATEWAY_TOKEN })
        : Effect.fail(new ComputeFailure({ code: "GATEWAY_NOT_RUNNING", message: "No gateway runs this revision.", permanent: false }))
  }))
)

/** The whole API with native admin on, over the database it is given; a recorder as every gateway. */
export const nativeAdminServerLayer = serveForTest(
  nativeAdminPipeline({ development: true, maxBodyBytes: 448 * 1024 }, NATIVE_ADMIN)
).pipe(
  Layer.provide(testSecretDriver),
  Layer.provide(recorderCompute),
  Layer.provideMerge(Recorder.layer),
  Layer.provide(Layer.succeed(AuthSettings, settings)),
  Layer.provide(Layer.succeed(InstallationConfiguration, { ...defaultInstallationConfig, nativeAdmin: NATIVE_ADMIN }))
)

/** `nativeAdminServerLayer` over a fresh database. */
export const nativeAdminTestLayer = nativeAdminServerLayer.pipe(Layer.provideMerge(migratedDatabaseLayer))

export const sharedCookie = (token: string) => `${settings.cookieName}=${token}`

export const auditOf = (kind: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ actor_principal_id: string; resource_id: string }>`
      SELECT actor_principal_id, resource_id FROM audit_events WHERE kind = ${kind} ORDER BY id
    `.pipe(Effect.orDie))
