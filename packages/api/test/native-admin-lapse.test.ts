/**
 * An open Control UI WebSocket is held to its session, grant and Agent state (SPEC 3 "Session",
 * 4.4 rule 2, 5.1, 5.8): sign-out, a disabled account, a removed `agent:administer`, or the Agent
 * stopped, deleted or serving another revision closes it at the next check, while a socket whose
 * admission holds stays open; and the server's shutdown never waits for a relayed socket to end
 * on its own.
 */
import { SqlClient } from "@effect/sql"
import { NativeAdminRecheck } from "@svc/api"
import { describe, expect, layer } from "@effect/vitest"
import { RoleId } from "@svc/core/schema"
import { Duration, Effect, Layer, Schedule } from "effect"
import * as net from "node:net"
import { WebSocket } from "ws"
import { bindRole, signedInSession } from "../../../testing/identity.js"
import { expectData } from "./support/iamServer.js"
import { LogCapture } from "../../../testing/server.js"
import { agentFixture } from "./support/nativeAdminAgent.js"
import { auditOf, CONSOLE_ORIGIN, nativeAdminServerLayer, nativeAdminTestLayer, sharedCookie } from "./support/nativeAdminServer.js"

const CONNECT = JSON.stringify({ type: "req", id: "1", method: "connect", params: { client: { id: "openclaw-control-ui", mode: "webchat" }, role: "operator" } })
const CHAT = JSON.stringify({ type: "req", id: "2", method: "chat.send", params: {} })

interface Relayed {
  readonly socket: WebSocket
  /** The close code the browser sees. */
  readonly closed: Promise<number>
}

/** A browser's socket through the proxy, past its connect request (which the recorder echoes). */
const openSocket = (baseUrl: string, host: string, token: string) =>
  Effect.async<Relayed>((resume) => {
    const socket = new WebSocket(`ws://127.0.0.1:${new URL(baseUrl).port}/ws`, { headers: { host, cookie: sharedCookie(token), origin: `http://${host}` } })
    const closed = new Promise<number>((resolve) => socket.once("close", (code) => resolve(code)))
    socket.once("open", () => socket.send(CONNECT))
    socket.once("message", () => resume(Effect.succeed({ socket, closed })))
    socket.once("error", (error) => resume(Effect.die(error)))
  })

/** One message relayed both ways on an open socket (the recorder echoes it). */
const echoed = (socket: WebSocket, message: string) =>
  Effect.async<string>((resume) => {
    socket.once("message", (data) => resume(Effect.succeed(String(data))))
    socket.send(message)
  })

const closedCode = (relayed: Relayed) => Effect.promise(() => relayed.closed)

const closures = (principalId: string) =>
  Effect.map(auditOf("agent.native-admin-closed"), (rows) => rows.filter((row) => row.actor_principal_id === principalId))

/**
 * The closure's audit reasons, once there are any: the sockets are destroyed first and the record
 * written after, so the browser can see its close before the record is there.
 */
const closureReasons = (principalId: string): Effect.Effect<ReadonlyArray<{ readonly reason: string }>, never, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ reason: string }>`
    SELECT details->>'reason' AS reason FROM audit_events
    WHERE kind = 'agent.native-admin-closed' AND actor_principal_id = ${principalId} ORDER BY id
  `.pipe(Effect.orDie)).pipe(
    Effect.flatMap((rows) => rows.length > 0 ? Effect.succeed(rows) : Effect.zipRight(Effect.sleep(Duration.millis(50)), closureReasons(principalId)))
  )

type Fixture = Effect.Effect.Success<ReturnType<typeof agentFixture>>

/** A relaying socket of a fresh Agent is closed after `lapse`, and its closure audited with `reason`. */
const closesAfter = <E, R>(label: string, reason: string, lapse: (f: Fixture) => Effect.Effect<void, E, R>) =>
  Effect.gen(function* () {
    const f = yield* agentFixture(label)
    const relayed = yield* openSocket(f.baseUrl, f.host, f.token)
    expect(yield* echoed(relayed.socket, CHAT)).toBe(CHAT)
    yield* lapse(f)
    expect(yield* closedCode(relayed)).toBe(1006)
    expect(yield* closureReasons(f.principalId)).toEqual([{ reason }])
  })

// Checked every 200 ms; a check may take 30 s before it counts as a lapse, so a loaded machine
// never closes a socket whose admission holds.
const recheck = Layer.succeed(NativeAdminRecheck, { every: Duration.millis(200), within: Duration.seconds(30) })

describe("native admin: an open WebSocket follows its session, grant and Agent state", () => {
  // Live clock: the server checks on a real schedule.
  layer(nativeAdminTestLayer.pipe(Layer.provideMerge(recheck), Layer.provideMerge(LogCapture.layer)), { timeout: 120_000, excludeTestServices: true })((it) => {
    it.effect("sign-out closes its socket; a socket of another session of the same account stays open", () =>
      Effect.gen(function* () {
        const f = yield* agentFixture("lapse-signout")
        const logs = yield* LogCapture
        const sql = yield* SqlClient.SqlClient
        const otherToken = (yield* signedInSession(f.userId)).token
        // Opened first, so each of its checks is due before the other socket's.
        const kept = yield* openSocket(f.baseUrl, f.host, otherToken)
        const lapsing = yield* openSocket(f.baseUrl, f.host, f.token)
        const signOut = yield* Effect.promise(() => fetch(`${f.baseUrl}/api/auth/sign-out`, {
          method: "POST",
          headers: { cookie: sharedCookie(f.token), origin: CONSOLE_ORIGIN }
        }))
        expect(signOut.status).toBe(200)
        expect(yield* closedCode(lapsing)).toBe(1006)
        // The other session's socket was checked as often, and still relays.
        expect(kept.socket.readyState).toBe(WebSocket.OPEN)
        expect(yield* echoed(kept.socket, CHAT)).toBe(CHAT)
        expect(yield* closureReasons(f.principalId)).toEqual([{ reason: "session" }])
        expect(yield* closures(f.principalId)).toEqual([{ actor_principal_id: f.principalId, resource_id: f.agentId }])
        const lines = logs.entries.filter((entry) => JSON.stringify(entry.message).includes("its admission lapsed"))
        expect(lines.map((entry) => entry.level)).toEqual(["INFO"])
        expect(JSON.stringify(lines[0]!.message)).toContain(`"reason":"session"`)
        expect(JSON.stringify(logs.entries)).not.toContain(f.token)
        const [revoked] = yield* sql<{ count: number }>`SELECT count(*)::int AS count FROM sessions WHERE account_id = ${f.userId} AND revoked_at IS NOT NULL`
        expect(revoked?.count).toBe(1)
        kept.socket.terminate()
      }))

    it.effect("disabling the account closes its socket", () =>
      closesAfter("lapse-disabled", "session", (f) =>
        Effect.flatMap(SqlClient.SqlClient, (sql) => sql`UPDATE accounts SET disabled = true WHERE id = ${f.userId}`.pipe(Effect.orDie))))

    it.effect("losing agent:administer closes its socket, even with read and operate left", () =>
      closesAfter("lapse-grant", "grant", (f) =>
        Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          const role = RoleId.make()
          yield* sql`INSERT INTO roles (id, namespace_id, name, permissions) VALUES (${role}, ${f.ns}, ${`operator-${role}`}, ARRAY['agent:read', 'agent:operate'])`
          yield* sql`DELETE FROM access_bindings WHERE principal_id = ${f.principalId}`
          yield* bindRole(f.principalId, role, { kind: "agent", id: f.agentId, namespaceId: f.ns })
        })))

    it.effect("stopping the Agent through the API closes its socket; another Agent's socket stays open", () =>
      Effect.gen(function* () {
        const other = yield* agentFixture("lapse-stop-other")
        const f = yield* agentFixture("lapse-stop")
        const sql = yield* SqlClient.SqlClient
        // Opened first, so each of its checks is due before the other socket's.
        const kept = yield* openSocket(other.baseUrl, other.host, other.token)
        const lapsing = yield* openSocket(f.baseUrl, f.host, f.token)
        expect(yield* echoed(lapsing.socket, CHAT)).toBe(CHAT)
        const stopped = expectData(yield* f.call("POST", `/agents/${f.agentId}/stop`), 202)
        expect(stopped).toMatchObject({ id: f.agentId, status: "active", desiredRuntimeState: "stopped" })
        expect(yield* closedCode(lapsing)).toBe(1006)
        expect(kept.socket.readyState).toBe(WebSocket.OPEN)
        expect(yield* echoed(kept.socket, CHAT)).toBe(CHAT)
        expect(yield* closureReasons(f.principalId)).toEqual([{ reason: "agent" }])
        const details = yield* sql<{ details: unknown }>`SELECT details FROM audit_events WHERE kind = 'agent.native-admin-closed' AND actor_principal_id = ${f.principalId}`
        expect(details).toEqual([{ details: { revisionId: f.revisionId, reason: "agent" } }])
        expect(yield* closures(other.principalId)).toEqual([])
        kept.socket.terminate()
      }))

    it.effect("deleting the Agent through the API closes its socket", () =>
      closesAfter("lapse-delete", "agent", (f) =>
        Effect.gen(function* () {
          const deleting = expectData(yield* f.call("DELETE", `/agents/${f.agentId}`), 202)
          expect(deleting).toMatchObject({ id: f.agentId, status: "deleting" })
        })))

    it.effect("another revision made active closes a socket admitted to the previous one", () =>
      closesAfter("lapse-redeploy", "agent", (f) =>
        Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          const next = expectData(yield* f.call("POST", `/agents/${f.agentId}/deploy`), 202)
          expect(next.id).not.toBe(f.revisionId)
          // No worker runs here: the new revision is activated as the worker would once it is deployed.
          yield* sql`UPDATE agents SET active_revision_id = ${next.id} WHERE id = ${f.agentId}`
        })))

    it.effect("the server's shutdown ends a relayed WebSocket instead of waiting for it", () =>
      Effect.gen(function* () {
        // A server of its own, shut down when this scope closes, with the socket still open.
        const relayed = yield* Effect.scoped(Effect.gen(function* () {
          const server = yield* Layer.build(nativeAdminServerLayer)
          const f = yield* agentFixture("lapse-shutdown").pipe(Effect.provide(server))
          const opened = yield* openSocket(f.baseUrl, f.host, f.token)
          expect(yield* echoed(opened.socket, CHAT)).toBe(CHAT)
          return opened
        }))
        expect(yield* closedCode(relayed)).toBe(1006)
      }))

    it.effect("the server's shutdown is not held by a refused handshake whose browser left during admission", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        yield* Effect.scoped(Effect.gen(function* () {
          const server = yield* Layer.build(nativeAdminServerLayer)
          const f = yield* agentFixture("lapse-left").pipe(Effect.provide(server))
          const signOut = yield* Effect.promise(() => fetch(`${f.baseUrl}/api/auth/sign-out`, {
            method: "POST",
            headers: { cookie: sharedCookie(f.token), origin: CONSOLE_ORIGIN }
          }))
          expect(signOut.status).toBe(200)
          // The session lookup waits on the lock while the browser resets its connection; then the
          // handshake is refused (401) on a socket already gone.
          yield* sql.withTransaction(Effect.gen(function* () {
            yield* sql`LOCK TABLE sessions IN ACCESS EXCLUSIVE MODE`
            const browser = net.connect(Number(new URL(f.baseUrl).port), "127.0.0.1")
            browser.on("error", () => undefined)
            browser.write([
              "GET /ws HTTP/1.1", `Host: ${f.host}`, "Upgrade: websocket", "Connection: Upgrade",
              "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Version: 13",
              `Origin: http://${f.host}`, `Cookie: ${sharedCookie(f.token)}`, "", ""
            ].join("\r\n"))
            yield* Effect.repeat(
              sql<{ waiting: number }>`SELECT count(*)::int AS waiting FROM pg_locks WHERE relation = 'sessions'::regclass AND NOT granted`,
              { until: ([row]) => row!.waiting > 0, schedule: Schedule.spaced(Duration.millis(50)) }
            )
            browser.resetAndDestroy()
            // Time for the server to see the browser's socket close before admission goes on.
            yield* Effect.sleep(Duration.millis(300))
          }))
        }))
      }))
  })
})
