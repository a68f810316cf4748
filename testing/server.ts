/**
 * Real HTTP servers on loopback for tests: the layer under test listens on 127.0.0.1 with a
 * free port, and tests call it with fetch.
 */
import { HttpServer } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { Cause, Context, Effect, Layer, Logger } from "effect"
import { createEnvelopedServer } from "@svc/core/http"

export class TestServer extends Context.Tag("testing/TestServer")<TestServer, { readonly baseUrl: string }>() {}

const address = Layer.effect(
  TestServer,
  Effect.map(HttpServer.HttpServer, (server) => {
    if (server.address._tag !== "TcpAddress") throw new Error("expected a TCP address")
    return { baseUrl: `http://127.0.0.1:${server.address.port}` }
  })
)

/**
 * Serves `app` (a layer that needs an HttpServer) on a free loopback port, on the server the
 * API runs on, so what Node refuses by itself (a head over 16 KiB) is answered as in production.
 */
export const serveForTest = <E, R>(app: Layer.Layer<never, E, R>) =>
  Layer.merge(app, address).pipe(
    Layer.provide(NodeHttpServer.layer(createEnvelopedServer, { host: "127.0.0.1", port: 0 }))
  )

export interface CapturedLog {
  readonly level: string
  readonly message: unknown
  readonly annotations: Record<string, unknown>
  readonly cause: string
}

/** A logger that keeps every entry in memory, for assertions on what was (not) logged. */
export class LogCapture extends Context.Tag("testing/LogCapture")<LogCapture, { readonly entries: Array<CapturedLog> }>() {
  static readonly layer = Layer.unwrapEffect(
    Effect.sync(() => {
      const entries: Array<CapturedLog> = []
      const logger = Logger.make<unknown, void>(({ annotations, cause, logLevel, message }) => {
        entries.push({
          level: logLevel.label,
          message,
          annotations: Object.fromEntries(annotations),
          cause: Cause.isEmpty(cause) ? "" : Cause.pretty(cause)
        })
      })
      return Layer.merge(Layer.succeed(LogCapture, { entries }), Logger.replace(Logger.defaultLogger, logger))
    })
  )
}

/** Parses a response body as JSON, keeping status and headers at hand. */
export const call = async (url: string, init?: RequestInit) => {
  const response = await fetch(url, init)
  const text = await response.text()
  // Untyped on purpose: tests read whatever JSON came back and assert its exact shape.
  let body: any = undefined
  try {
    body = text.length > 0 ? JSON.parse(text) : undefined
  } catch {
    body = text
  }
  return { status: response.status, headers: response.headers, body, text }
}

export const REQUEST_ID = /^req_[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

