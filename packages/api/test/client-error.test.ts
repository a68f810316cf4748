/**
 * Requests node's HTTP parser refuses before any handler runs (a malformed header line, a
 * request head over 16 KiB, an HTTP/1.1 request without Host), and those it hands to no handler
 * (CONNECT, an unmet `Expect`), are answered in the SPEC 2.1 envelope by the API server, with a
 * request id in `meta` and `x-request-id`. Raw TCP, since no HTTP client sends such requests.
 */
import { describe, expect, it } from "@effect/vitest"
import { HttpServer } from "@effect/platform"
import { ApiGroupsLive, AuthSettings, listen, SvcApi } from "@svc/api"
import { defaultInstallationConfig, InstallationConfiguration } from "@svc/core/config"
import { httpPipeline } from "@svc/core/http"
import { testSecretDriver, unavailableCompute } from "../../../testing/drivers.js"
import { Effect, Layer } from "effect"
import * as net from "node:net"
import { migratedDatabaseLayer } from "../../../testing/database.js"
import { REQUEST_ID, TestServer } from "../../../testing/server.js"

const address = Layer.effect(
  TestServer,
  Effect.map(HttpServer.HttpServer, (server) => {
    if (server.address._tag !== "TcpAddress") throw new Error("expected a TCP address")
    return { baseUrl: `http://127.0.0.1:${server.address.port}` }
  })
)

/** The API server as production listens (the same `listen`), on a free loopback port. */
const layer = Layer.merge(httpPipeline(SvcApi, ApiGroupsLive, { development: false, maxBodyBytes: 448 * 1024 }), address).pipe(
  Layer.provide(listen({ host: "127.0.0.1", port: 0 })),
  Layer.provide(Layer.merge(testSecretDriver, unavailableCompute)),
  Layer.provide(Layer.succeed(AuthSettings, AuthSettings.from({ baseUrl: "http://127.0.0.1:8080", production: false }))),
  Layer.provide(Layer.succeed(InstallationConfiguration, defaultInstallationConfig)),
  Layer.provide(migratedDatabaseLayer)
)

/** Sends raw bytes and reads everything until the server closes the connection. */
const exchange = (baseUrl: string, request: string) =>
  Effect.promise(
    () =>
      new Promise<string>((resolve, reject) => {
        const { hostname, port } = new URL(baseUrl)
        const socket = net.connect({ host: hostname, port: Number(port) })
        const chunks: Array<Buffer> = []
        socket.on("data", (chunk: Buffer) => chunks.push(chunk))
        socket.on("error", reject)
        socket.on("close", () => resolve(Buffer.concat(chunks).toString("utf8")))
        socket.write(request)
      })
  )

const parse = (raw: string) => {
  const [head, ...rest] = raw.split("\r\n\r\n")
  const [statusLine, ...headerLines] = head!.split("\r\n")
  const headers = Object.fromEntries(headerLines.map((line) => {
    const colon = line.indexOf(":")
    return [line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim()]
  }))
  return { statusLine, headers, body: JSON.parse(rest.join("\r\n\r\n")) as unknown }
}

const expectEnvelope = (raw: string, statusLine: string, code = "INVALID_REQUEST") => {
  const response = parse(raw)
  expect(response.statusLine).toBe(statusLine)
  expect(response.headers["content-type"]).toBe("application/json")
  expect(response.headers["x-request-id"]).toMatch(REQUEST_ID)
  expect(response.body).toEqual({
    error: { code, message: expect.any(String) },
    meta: { requestId: response.headers["x-request-id"] }
  })
}

describe("requests node refuses before routing", () => {
  it.layer(layer, { timeout: 120_000 })((it) => {
    it.effect("a malformed header line is 400 INVALID_REQUEST in the envelope", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        expectEnvelope(yield* exchange(baseUrl, "GET /healthz HTTP/1.1\r\nHost: x\r\nthis is not a header\r\n\r\n"), "HTTP/1.1 400 Bad Request")
        expectEnvelope(yield* exchange(baseUrl, "GET /healthz HTTP/1.1\r\nHost: x\r\nBad Name: v\r\n\r\n"), "HTTP/1.1 400 Bad Request")
      }))

    it.effect("a request head over 16 KiB is 431 in the envelope", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        expectEnvelope(
          yield* exchange(baseUrl, `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(20_000)}\r\n\r\n`),
          "HTTP/1.1 431 Request Header Fields Too Large"
        )
        expectEnvelope(
          yield* exchange(baseUrl, `GET /healthz?${"q".repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`),
          "HTTP/1.1 431 Request Header Fields Too Large"
        )
      }))

    it.effect("CONNECT, which node hands to no handler, is 501 NOT_IMPLEMENTED in the envelope, not a closed socket", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        expectEnvelope(yield* exchange(baseUrl, "CONNECT 127.0.0.1:443 HTTP/1.1\r\nHost: 127.0.0.1:443\r\n\r\n"), "HTTP/1.1 501 Not Implemented", "NOT_IMPLEMENTED")
        expectEnvelope(yield* exchange(baseUrl, "CONNECT /healthz HTTP/1.1\r\nHost: x\r\n\r\n"), "HTTP/1.1 501 Not Implemented", "NOT_IMPLEMENTED")
      }))

    it.effect("an Expect other than 100-continue is 417 in the envelope, not node's bare 417", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        expectEnvelope(yield* exchange(baseUrl, "GET /healthz HTTP/1.1\r\nHost: x\r\nExpect: magic\r\n\r\n"), "HTTP/1.1 417 Expectation Failed")
        const body = JSON.stringify({ name: "x" })
        expectEnvelope(
          yield* exchange(baseUrl, `POST /namespaces HTTP/1.1\r\nHost: x\r\nExpect: 200-ok\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`),
          "HTTP/1.1 417 Expectation Failed"
        )
      }))

    it.effect("an HTTP/1.1 request without Host is 400 in the envelope, before authentication; HTTP/1.0 needs none", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        for (const target of ["/healthz", "/namespaces"]) {
          const response = parse(yield* exchange(baseUrl, `GET ${target} HTTP/1.1\r\nConnection: close\r\n\r\n`))
          expect(response.statusLine).toBe("HTTP/1.1 400 Bad Request")
          expect(response.headers["x-request-id"]).toMatch(REQUEST_ID)
          expect(response.body).toEqual({
            error: { code: "INVALID_REQUEST", message: expect.any(String), details: [{ code: "REQUIRED", path: "/headers/host" }] },
            meta: { requestId: response.headers["x-request-id"] }
          })
        }
        const old = parse(yield* exchange(baseUrl, "GET /healthz HTTP/1.0\r\n\r\n"))
        expect(old.statusLine).toBe("HTTP/1.1 200 OK")
      }))

    it.effect("a well-formed request on the same server is answered as usual", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const response = parse(yield* exchange(baseUrl, "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"))
        expect(response.statusLine).toBe("HTTP/1.1 200 OK")
        expect(response.body).toEqual({ data: { status: "ok" }, meta: { requestId: response.headers["x-request-id"] } })
      }))
  })
})
