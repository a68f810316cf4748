import { createEnvelopedServer } from "@svc/core/http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

const REQUEST_ID = /^req_[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

describe("a request that arrives while no app serves the server", () => {
  const server = createEnvelopedServer()
  let base = ""
  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  })
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

  it("is answered 503 DEPENDENCY_UNAVAILABLE in the envelope with Retry-After, not left hanging", async () => {
    const response = await fetch(`${base}/readyz`, { signal: AbortSignal.timeout(10_000) })
    expect(response.status).toBe(503)
    expect(response.headers.get("retry-after")).toBe("1")
    expect(response.headers.get("cache-control")).toBe("no-store")
    const requestId = response.headers.get("x-request-id")
    expect(requestId).toMatch(REQUEST_ID)
    expect(await response.json()).toEqual({
      error: { code: "DEPENDENCY_UNAVAILABLE", message: "The server is starting or stopping; retry shortly." },
      meta: { requestId }
    })
  })

  it("stays silent once an app serves the server, and answers again after it is detached", async () => {
    const app = (_: unknown, response: import("node:http").ServerResponse) => {
      response.writeHead(200, { "content-type": "text/plain" })
      response.end("served by the app")
    }
    server.on("request", app)
    const served = await fetch(`${base}/anything`, { signal: AbortSignal.timeout(10_000) })
    expect(served.status).toBe(200)
    expect(await served.text()).toBe("served by the app")
    server.off("request", app)
    const detached = await fetch(`${base}/anything`, { signal: AbortSignal.timeout(10_000) })
    expect(detached.status).toBe(503)
    await detached.text()
  })
})
