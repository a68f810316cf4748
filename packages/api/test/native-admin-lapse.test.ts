/**
 * An open Control UI WebSocket is held to its session and grant (SPEC 3 "Session", 5.1, 5.8):
 * sign-out, a disabled account, or a removed `agent:administer` closes it at the next check,
 * instead of leaving a relay to the gateway that no request could open any more.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Duration, Effect, Layer } from "effect"
import { WebSocket } from "ws"
import { NativeAdminRecheck } from "../src/nativeAdmin/index.js"
import { agentFixture } from "./support/nativeAdminAgent.js"
import { nativeAdminTestLayer, sharedCookie } from "./support/nativeAdminServer.js"

const CONNECT = JSON.stringify({ type: "req", id: "1", method: "connect", params: { client: { id: "openclaw-control-ui", mode: "webchat" }, role: "operator" } })

/** A socket opened and past its connect request (echoed by the recorder), and its close code. */
const openSocket = (baseUrl: string, host: string, token: string) =>
  Effect.async<{ readonly closed: Promise<number>; readonly socket: WebSocket }>((resume) => {
    const socket = new WebSocket(`ws://127.0.0.1:${new URL(baseUrl).port}/ws`, { headers: { host, cookie: sharedCookie(token), origin: `http://${host}` } })
    const closed = new Promise<number>((resolve) => socket.once("close", (code) => resolve(code)))
    socket.once("open", () => socket.send(CONNECT))
    socket.once("message", () => resume(Effect.succeed({ closed, socket })))
    socket.once("error", (error) => resume(Effect.die(error)))
  })

/** The close code, or "open" when the socket is still open after 10 s (a check is every 200 ms). */
const closedWithin = (closed: Promise<number>) =>
  Effect.promise(() => Promise.race([closed, new Promise<"open">((resolve) => setTimeout(() => resolve("open"), 10_000))]))

const stillOpenAfter = (socket: WebSocket, ms: number) =>
  Effect.promise(() => new Promise<number>((resolve) => setTimeout(() => resolve(socket.readyState), ms)))

describe("native admin: an open WebSocket follows its session and grant", () => {
  // Live clock: the server checks on a real schedule.
  layer(nativeAdminTestLayer.pipe(Layer.provide(Layer.succeed(NativeAdminRecheck, Duration.millis(200)))), { timeout: 60_000, excludeTestServices: true })((it) => {
    it.effect("sign-out closes it; a socket whose session holds stays open", () =>
      Effect.gen(function* () {
        const f = yield* agentFixture("lapse-signout")
        const sql = yield* SqlClient.SqlClient
        const { closed, socket } = yield* openSocket(f.baseUrl, f.host, f.token)
        // Several checks pass while the session holds.
        expect(yield* stillOpenAfter(socket, 1_000)).toBe(WebSocket.OPEN)
        const signOut = yield* Effect.promise(() => fetch(`${f.baseUrl}/api/auth/sign-out`, {
          method: "POST",
          headers: { cookie: sharedCookie(f.token), origin: "http://console.example.test:8080" }
        }))
        expect(signOut.status).toBe(200)
        const [session] = yield* sql<{ revoked: boolean }>`SELECT revoked_at IS NOT NULL AS revoked FROM sessions ORDER BY created_at DESC LIMIT 1`
        expect(session?.revoked).toBe(true)
        expect(yield* closedWithin(closed)).toBe(1006)
      }))

    it.effect("losing agent:administer closes it", () =>
      Effect.gen(function* () {
        const f = yield* agentFixture("lapse-grant")
        const sql = yield* SqlClient.SqlClient
        const { closed, socket } = yield* openSocket(f.baseUrl, f.host, f.token)
        expect(yield* stillOpenAfter(socket, 600)).toBe(WebSocket.OPEN)
        yield* sql`DELETE FROM access_bindings WHERE principal_id = ${f.principalId}`
        expect(yield* closedWithin(closed)).toBe(1006)
      }))
  })
})
