/**
 * SPEC 8 "64 sockets per listener": a real credential service's client listener serves while 63
 * sockets are held open, drops a new connection unanswered while 64 are, and serves again once
 * one of them closes. Acceptance is asynchronous, so each state is polled for.
 */
import { CredentialServiceLimits as L } from "@svc/core/schema"
import * as net from "node:net"
import { afterAll, describe, expect, it } from "vitest"
import { rawExchange } from "./support/listenerClient.js"
import { useCredentialService } from "./support/service.js"

const world = useCredentialService()
const service = () => world.service()
const held: Array<net.Socket> = []

// Registered after the world's: runs before it, so the sockets are gone before the service stops.
afterAll(() => {
  for (const socket of held) socket.destroy()
})

/** An idle socket, connected. */
const hold = () =>
  new Promise<void>((resolve, reject) => {
    const url = new URL(service().listenerUrl)
    const socket = net.connect(Number(url.port), url.hostname, () => resolve())
    socket.on("error", reject)
    held.push(socket)
  })

/** One unauthenticated request: its status line, or "" when the listener drops the connection unanswered. */
const probe = async () => {
  const answer = await rawExchange(service().listenerUrl, "GET /api/v3/repos/acme/widgets HTTP/1.1\r\nHost: listener\r\n\r\n")
    .catch(() => "")
  return answer.split("\r\n")[0] ?? ""
}

const probeUntil = async (expected: string) => {
  for (let attempt = 0; attempt < 200; attempt++) {
    const seen = await probe()
    if (seen === expected) return seen
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  return probe()
}

describe("sockets per listener", () => {
  it("63 held: served; 64 held: a new connection is dropped; one closed: served again", async () => {
    for (let i = 0; i < L.socketsPerListener - 1; i++) await hold()
    expect(await probe()).toBe("HTTP/1.1 401 Unauthorized")
    await hold()
    expect(await probeUntil("")).toBe("")
    expect(await probe()).toBe("")
    held.pop()!.destroy()
    expect(await probeUntil("HTTP/1.1 401 Unauthorized")).toBe("HTTP/1.1 401 Unauthorized")
  }, 120_000)
})
