/**
 * The native admin proxy without a gateway (SPEC 4.4 rule 2, 5.5.4, 5.8): the real API with
 * native admin on, a real database, and a recording HTTP server on loopback where the gateway
 * would be. Shared cookie naming and clearing; who may open an Agent host; what crosses.
 */
import { HttpServerResponse } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { AuthSettings, clearSessionCookie, setSessionCookie } from "@svc/api"
import { BuiltinRoles } from "@svc/core/iam"
import { AgentId } from "@svc/core/schema"
import { describe, expect, it } from "@effect/vitest"
import { NATIVE_ADMIN_ROUTE, SvcMetrics } from "@svc/core/observability"
import { Effect, Metric, MetricLabel } from "effect"
import { bindInstallationAdmin, bindRole, createAccount, createServicePrincipal, insertServiceKey, PASSWORD, signedInSession } from "../../../testing/identity.js"
import { REQUEST_ID, TestServer } from "../../../testing/server.js"
import { send } from "./support/iamServer.js"
import { agentFixture, upgradeRequest } from "./support/nativeAdminAgent.js"
import {
  agentHost,
  auditOf,
  CONSOLE_ORIGIN,
  GATEWAY_TOKEN,
  hostRequest,
  type HostResponse,
  nativeAdminTestLayer,
  NATIVE_ADMIN,
  Recorder,
  settings,
  sharedCookie
} from "./support/nativeAdminServer.js"

const cookiesOf = (response: HttpServerResponse.HttpServerResponse) =>
  Object.fromEntries(Object.values(response.cookies.cookies).map((c) => [c.name, { value: c.value, ...c.options }]))

describe("native admin: the session cookie (SPEC 5.8)", () => {
  const session = { id: "s", token: "svcs_token", sessionKey: "k", expiresAt: new Date(Date.now() + 60_000) }

  it.effect("off: host-only svc.session_token, nothing else set or cleared", () =>
    Effect.gen(function* () {
      for (const production of [false, true]) {
        const off = AuthSettings.from({ baseUrl: "https://console.example.test", production, nativeAdmin: { ...NATIVE_ADMIN, enabled: false } })
        const name = production ? "__Secure-svc.session_token" : "svc.session_token"
        expect(off.cookieName).toBe(name)
        const set = cookiesOf(yield* setSessionCookie(HttpServerResponse.empty(), off, session))
        expect(Object.keys(set)).toEqual([name])
        expect(set[name]!.domain).toBeUndefined()
        const cleared = cookiesOf(yield* clearSessionCookie(HttpServerResponse.empty(), off))
        expect(Object.keys(cleared)).toEqual([name])
        expect(cleared[name]).toMatchObject({ value: "", maxAge: 0 })
      }
    }))

  it.effect("on: svc_shared.session_token scoped to the configured domain; the host-only name is cleared on set and on clear", () =>
    Effect.gen(function* () {
      for (const production of [false, true]) {
        const on = AuthSettings.from({ baseUrl: "https://console.example.test", production, nativeAdmin: NATIVE_ADMIN })
        const prefix = production ? "__Secure-" : ""
        const shared = `${prefix}svc_shared.session_token`
        const hostOnly = `${prefix}svc.session_token`
        expect(on.cookieName).toBe(shared)
        const set = cookiesOf(yield* setSessionCookie(HttpServerResponse.empty(), on, session))
        expect(set[shared]).toMatchObject({ value: "svcs_token", domain: "example.test", httpOnly: true, sameSite: "lax", path: "/", secure: production })
        expect(set[hostOnly]).toMatchObject({ value: "", maxAge: 0, path: "/" })
        expect(set[hostOnly]!.domain).toBeUndefined()
        const cleared = cookiesOf(yield* clearSessionCookie(HttpServerResponse.empty(), on))
        expect(cleared[shared]).toMatchObject({ value: "", maxAge: 0, domain: "example.test" })
        expect(cleared[hostOnly]).toMatchObject({ value: "", maxAge: 0 })
      }
    }))
})

const expectEnvelope = (result: HostResponse, status: number, code: string) => {
  expect({ status: result.status, body: result.body }).toEqual({
    status,
    body: { error: { code, message: expect.any(String) }, meta: { requestId: expect.stringMatching(REQUEST_ID) } }
  })
  expect(result.headers["x-request-id"]).toBe(result.body.meta.requestId)
}

describe("native admin: Agent hosts", () => {
  it.layer(nativeAdminTestLayer, { timeout: 120_000 })((it) => {
    it.effect("sign-in and sign-out through the console set and clear both cookie names; the shared cookie authenticates the console", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        yield* createAccount("signin@example.test", { password: PASSWORD })
        const signIn = yield* Effect.promise(() => fetch(`${baseUrl}/api/auth/sign-in/email`, {
          method: "POST",
          headers: { "content-type": "application/json", origin: CONSOLE_ORIGIN },
          body: JSON.stringify({ email: "signin@example.test", password: PASSWORD })
        }))
        expect(signIn.status).toBe(200)
        const set = signIn.headers.getSetCookie()
        const shared = set.find((c) => c.startsWith("svc_shared.session_token=svcs_"))!
        expect(shared).toContain("Domain=example.test")
        expect(set.find((c) => c.startsWith("svc.session_token=;"))).toMatch(/Max-Age=0/)
        const token = /^svc_shared\.session_token=([^;]+)/.exec(shared)![1]!
        const inspected = yield* send(baseUrl, "GET", "/api/auth/session", { cookie: sharedCookie(token) })
        expect(inspected.body.data).toMatchObject({ authenticated: true, email: "signin@example.test" })
        // The host-only name is no longer the session cookie once the shared one is in use.
        expect((yield* send(baseUrl, "GET", "/api/auth/session", { cookie: `svc.session_token=${token}` })).body.data).toBeNull()
        // Beside the shared one, a host-only cookie (planted or stale) is not read: not ambiguous.
        const beside = yield* send(baseUrl, "GET", "/api/auth/session", { cookie: `svc.session_token=svcs_planted; ${sharedCookie(token)}` })
        expect(beside.body.data).toMatchObject({ authenticated: true, email: "signin@example.test" })
        const signOut = yield* Effect.promise(() => fetch(`${baseUrl}/api/auth/sign-out`, {
          method: "POST",
          headers: { cookie: sharedCookie(token), origin: CONSOLE_ORIGIN }
        }))
        expect(signOut.status).toBe(200)
        const cleared = signOut.headers.getSetCookie()
        expect(cleared.find((c) => c.startsWith("svc_shared.session_token=;"))).toMatch(/Max-Age=0.*Domain=example\.test|Domain=example\.test.*Max-Age=0/)
        expect(cleared.find((c) => c.startsWith("svc.session_token=;"))).toMatch(/Max-Age=0/)
      }))

    it.effect("who may open an Agent host: shared session with exact agent:administer only", () =>
      Effect.gen(function* () {
        const f = yield* agentFixture("matrix")
        const recorder = yield* Recorder
        const before = recorder.requests.length
        const get = (headers: Record<string, string> = {}, host = f.host) => hostRequest(f.baseUrl, { host, headers })
        // Agent-host requests are counted under their own route label, never `unmatched`.
        const refusedByAuth = Metric.taggedWithLabels(SvcMetrics.httpRequests, [
          MetricLabel.make("method", "GET"), MetricLabel.make("route", NATIVE_ADMIN_ROUTE), MetricLabel.make("status", "401")
        ])
        const countedBefore = (yield* Metric.value(refusedByAuth)).count

        expectEnvelope(yield* get(), 401, "UNAUTHENTICATED")
        expectEnvelope(yield* get({ cookie: "svc_shared.session_token=svcs_forged" }), 401, "UNAUTHENTICATED")
        // The host-only cookie of the console is not the shared session.
        expectEnvelope(yield* get({ cookie: `svc.session_token=${f.token}` }), 401, "UNAUTHENTICATED")
        // SPEC 5.5.4: keys cannot open the native admin UI, not even an Installation administrator's.
        const service = yield* createServicePrincipal("native-automation")
        yield* bindInstallationAdmin(service)
        const { key } = yield* insertServiceKey(service)
        const keyed = yield* get({ "x-api-key": key })
        expectEnvelope(keyed, 401, "UNAUTHENTICATED")
        expect(keyed.body.error.message).toBe("Keys cannot open the native admin UI.")
        expectEnvelope(yield* get({ "x-api-key": key, cookie: sharedCookie(f.token) }), 401, "UNAUTHENTICATED")
        expect((yield* Metric.value(refusedByAuth)).count - countedBefore).toBe(5)

        // A human who may read and operate the Agent, but not administer it: 403 (audited).
        const editor = yield* createAccount("editor@example.test")
        yield* bindRole(editor.principalId, BuiltinRoles.namespaceEditor.id, { kind: "namespace", id: f.ns })
        const editorToken = (yield* signedInSession(editor.userId)).token
        expectEnvelope(yield* get({ cookie: sharedCookie(editorToken) }), 403, "FORBIDDEN")
        const denials = yield* auditOf("authorization.denied")
        expect(denials).toContainEqual(expect.objectContaining({ actor_principal_id: editor.principalId, resource_id: f.agentId }))
        // A human who cannot even read it: 404, as for an Agent that does not exist.
        const stranger = yield* createAccount("stranger@example.test")
        expectEnvelope(yield* get({ cookie: sharedCookie((yield* signedInSession(stranger.userId)).token) }), 404, "NOT_FOUND")
        // Unknown or malformed labels.
        expectEnvelope(yield* get({ cookie: sharedCookie(f.token) }, agentHost(AgentId.make())), 404, "NOT_FOUND")
        expectEnvelope(yield* get({ cookie: sharedCookie(f.token) }, `not-an-agent.${NATIVE_ADMIN.agentHostSuffix}`), 404, "NOT_FOUND")
        expect(recorder.requests.length).toBe(before)
      }))

    it.effect("a duplicated shared session cookie (one planted by a sibling host) is 401 and nothing is forwarded", () =>
      Effect.gen(function* () {
        const f = yield* agentFixture("twice")
        const recorder = yield* Recorder
        const before = recorder.requests.length
        const other = yield* createAccount("planted@example.test")
        const planted = (yield* signedInSession(other.userId)).token
        const get = (cookie: string) => hostRequest(f.baseUrl, { host: f.host, headers: { cookie } })
        for (const cookie of [`${sharedCookie(planted)}; ${sharedCookie(f.token)}`, `${sharedCookie(f.token)}; ${sharedCookie("garbage")}`]) {
          const refused = yield* get(cookie)
          expectEnvelope(refused, 401, "UNAUTHENTICATED")
          expect(refused.body.error.message).toBe("The session cookie is ambiguous: it was sent more than once.")
        }
        expect(recorder.requests.length).toBe(before)
        expect((yield* get(sharedCookie(f.token))).status).toBe(200)
        // A host-only cookie beside the shared one is never read here, so it cannot choose the session.
        expect((yield* get(`svc.session_token=${planted}; ${sharedCookie(f.token)}`)).status).toBe(200)
      }))

    it.effect("the Agent must be desired running with an active revision (409) and expose a private endpoint (503)", () =>
      Effect.gen(function* () {
        const f = yield* agentFixture("state")
        const sql = yield* SqlClient.SqlClient
        const recorder = yield* Recorder
        const get = () => hostRequest(f.baseUrl, { host: f.host, headers: { cookie: sharedCookie(f.token) } })
        yield* sql`UPDATE agents SET desired_runtime_state = 'stopped' WHERE id = ${f.agentId}`
        expectEnvelope(yield* get(), 409, "RESOURCE_CONFLICT")
        yield* sql`UPDATE agents SET desired_runtime_state = 'running', active_revision_id = NULL WHERE id = ${f.agentId}`
        expectEnvelope(yield* get(), 409, "RESOURCE_CONFLICT")
        const revision = (yield* sql<{ id: string }>`SELECT id FROM agent_revisions WHERE agent_id = ${f.agentId}`)[0]!.id
        yield* sql`UPDATE agents SET active_revision_id = ${revision} WHERE id = ${f.agentId}`
        recorder.gateways.delete(f.agentId)
        expectEnvelope(yield* get(), 503, "DEPENDENCY_UNAVAILABLE")
        recorder.gateways.add(f.agentId)
        expect((yield* get()).status).toBe(200)
      }))

    it.effect("a Host that merely contains the suffix is not an Agent host: the API answers", () =>
      Effect.gen(function* () {
        const f = yield* agentFixture("evil")
        const recorder = yield* Recorder
        const before = recorder.requests.length
        for (const host of [`${f.host}.evil.com`, `x.${f.host}`, NATIVE_ADMIN.agentHostSuffix, `${f.host.replace(".agents.", ".agentsx.")}`]) {
          const answered = yield* hostRequest(f.baseUrl, { host, path: "/api/auth/session", headers: { cookie: sharedCookie(f.token) } })
          expect(answered.status, host).toBe(200)
          expect(answered.body.data).toMatchObject({ authenticated: true })
        }
        expect(recorder.requests.length).toBe(before)
      }))

    it.effect("what crosses: no browser credential, forwarded identity or native scope header; the gateway's token; no Set-Cookie back", () =>
      Effect.gen(function* () {
        const f = yield* agentFixture("headers")
        const recorder = yield* Recorder
        const answered = yield* hostRequest(f.baseUrl, {
          host: f.host,
          path: "/control?tab=chat",
          headers: {
            cookie: `${sharedCookie(f.token)}; other=1`,
            authorization: "Bearer browser-supplied",
            "x-svc-session-key": "whatever",
            forwarded: "for=1.2.3.4;user=admin",
            "x-forwarded-for": "1.2.3.4",
            "x-forwarded-user": "admin@example.test",
            "x-forwarded-proto": "https",
            "x-real-ip": "1.2.3.4",
            "x-openclaw-scopes": "operator.admin",
            "x-openclaw-token": "injected",
            "tailscale-user-login": "admin@example.test",
            "accept": "text/html"
          }
        })
        expect(answered.status).toBe(200)
        expect(answered.headers["content-type"]).toMatch(/^text\/html/)
        expect(answered.text).toContain("<title>recorder</title>")
        expect(answered.headers["x-request-id"]).toMatch(REQUEST_ID)
        expect(answered.headers["set-cookie"]).toBeUndefined()
        const seen = recorder.requests.at(-1)!
        expect(seen.url).toBe("/control?tab=chat")
        expect(seen.headers["authorization"]).toBe(`Bearer ${GATEWAY_TOKEN}`)
        expect(seen.headers["host"]).toBe(new URL(recorder.url).host)
        expect(seen.headers["accept"]).toBe("text/html")
        for (const name of ["cookie", "x-svc-session-key", "forwarded", "x-forwarded-for", "x-forwarded-user", "x-forwarded-proto", "x-real-ip", "x-openclaw-scopes", "x-openclaw-token", "tailscale-user-login", "x-api-key"]) {
          expect(seen.headers[name], name).toBeUndefined()
        }
        expect(JSON.stringify(seen.headers)).not.toContain(f.token)
      }))

    it.effect("mutations and WebSocket handshakes need this Agent host's own Origin; an upgrade is relayed and audited", () =>
      Effect.gen(function* () {
        const f = yield* agentFixture("upgrade")
        const recorder = yield* Recorder
        const own = `http://${f.host}`
        const post = (headers: Record<string, string>) =>
          hostRequest(f.baseUrl, { host: f.host, method: "POST", path: "/api", headers: { cookie: sharedCookie(f.token), ...headers }, body: "{}" })
        expectEnvelope(yield* post({}), 403, "FORBIDDEN")
        expectEnvelope(yield* post({ origin: CONSOLE_ORIGIN }), 403, "FORBIDDEN")
        expectEnvelope(yield* post({ origin: `http://${agentHost(AgentId.make())}` }), 403, "FORBIDDEN")
        expect((yield* post({ origin: own })).status).toBe(200)

        const refused = yield* upgradeRequest(f.baseUrl, f.host, { cookie: sharedCookie(f.token), origin: CONSOLE_ORIGIN }, [])
        expect(refused).toMatchObject({ upgraded: false, status: 403 })
        const anonymous = yield* upgradeRequest(f.baseUrl, f.host, { origin: own }, [])
        expect(anonymous).toMatchObject({ upgraded: false, status: 401 })

        // The browser's connect request: its own credentials are dropped, the gateway token put
        // in; its device proof and every later message cross unchanged, both ways. The recorder
        // echoes, so the browser sees its rewritten frame here; a real gateway never echoes it.
        const device = { id: "dev", publicKey: "pk", signature: "sig", signedAt: 1, nonce: "n" }
        const connect = {
          type: "req", id: "1", method: "connect",
          params: { client: { id: "openclaw-control-ui", mode: "webchat" }, role: "operator", scopes: ["operator.admin"], device, auth: { token: "browser-token", password: "browser-password", deviceToken: "browser-device-token", bootstrapToken: "b" } }
        }
        const later = JSON.stringify({ type: "req", id: "2", method: "connect", params: { auth: { token: "later" } } })
        const before = recorder.messages.length
        const relayed = yield* upgradeRequest(f.baseUrl, f.host, { cookie: sharedCookie(f.token), origin: own, "x-openclaw-scopes": "operator.admin" }, [JSON.stringify(connect), later])
        expect(relayed).toMatchObject({ upgraded: true })
        const [first, second] = recorder.messages.slice(before)
        // The gateway-issued device token is kept (the device signature covers it), nothing else.
        expect(JSON.parse(first!)).toEqual({ ...connect, params: { ...connect.params, auth: { password: GATEWAY_TOKEN, deviceToken: "browser-device-token" } } })
        for (const offered of ["browser-token", "browser-password", "\"b\""]) expect(first).not.toContain(offered)
        expect(second).toBe(later)
        expect(relayed.upgraded && relayed.echoes).toEqual([first, later])
        const seen = recorder.requests.at(-1)!
        expect(seen.url).toBe("/ws?x=1")
        expect(seen.headers["upgrade"]).toBe("websocket")
        expect(seen.headers["origin"]).toBe(recorder.url)
        expect(seen.headers["authorization"]).toBe(`Bearer ${GATEWAY_TOKEN}`)
        expect(seen.headers["cookie"]).toBeUndefined()
        expect(seen.headers["x-openclaw-scopes"]).toBeUndefined()

        // A first message that is not a connect request closes the socket (1008) unsent.
        const count = recorder.messages.length
        const notConnect = yield* upgradeRequest(f.baseUrl, f.host, { cookie: sharedCookie(f.token), origin: own }, [JSON.stringify({ type: "req", id: "1", method: "chat.send" })])
        expect(notConnect).toMatchObject({ upgraded: true, echoes: [], closeCode: 1008 })
        expect(recorder.messages.length).toBe(count)
        const opened = yield* auditOf("agent.native-admin-opened")
        expect(opened).toContainEqual({ actor_principal_id: f.principalId, resource_id: f.agentId })
      }))

    it.effect("the browser cannot write the gateway's configuration: config and update methods are answered here, never relayed", () =>
      Effect.gen(function* () {
        const f = yield* agentFixture("config-write")
        const recorder = yield* Recorder
        const headers = { cookie: sharedCookie(f.token), origin: `http://${f.host}` }
        const connect = JSON.stringify({ type: "req", id: "1", method: "connect", params: { auth: {} } })
        const allowed = JSON.stringify({ type: "req", id: "2", method: "chat.send", params: {} })
        const before = recorder.messages.length
        const writes = ["config.patch", "config.apply", "config.set", "update.run", " Config.Patch "].map((method, index) =>
          JSON.stringify({ type: "req", id: `w${index}`, method, params: { raw: "{}", baseHash: "x" } })
        )
        const session = yield* upgradeRequest(f.baseUrl, f.host, headers, [connect, ...writes, allowed])
        expect(session).toMatchObject({ upgraded: true })
        // Only the connect request and the allowed call reached the gateway.
        const relayed = recorder.messages.slice(before).map((m) => JSON.parse(m) as { method: string })
        expect(relayed.map((m) => m.method)).toEqual(["connect", "chat.send"])
        // Each write got its own error response, with its request id.
        const answers = session.upgraded ? session.echoes.map((e) => JSON.parse(e) as Record<string, any>) : []
        for (const index of writes.keys()) {
          expect(answers).toContainEqual({ type: "res", id: `w${index}`, ok: false, error: { code: "FORBIDDEN", message: expect.any(String) } })
        }

        // Smuggling: a batch (a JSON array) closes the socket unsent; so does a frame that is not JSON.
        for (const smuggled of [JSON.stringify([JSON.parse(writes[0]!)]), "config.patch"]) {
          const count = recorder.messages.length
          const closed = yield* upgradeRequest(f.baseUrl, f.host, headers, [connect, smuggled, allowed])
          expect(closed).toMatchObject({ upgraded: true, closeCode: 1008 })
          expect(recorder.messages.slice(count).map((m) => (JSON.parse(m) as { method: string }).method)).toEqual(["connect"])
        }
      }))

    it.effect("Agent-host activity does not renew or touch the session cookie", () =>
      Effect.gen(function* () {
        const f = yield* agentFixture("renew")
        const sql = yield* SqlClient.SqlClient
        const expiry = () => sql<{ expires_at: Date }>`SELECT expires_at FROM sessions WHERE token_digest IS NOT NULL ORDER BY expires_at DESC LIMIT 1`
        const before = yield* expiry()
        const answered = yield* hostRequest(f.baseUrl, { host: f.host, headers: { cookie: sharedCookie(f.token) } })
        expect(answered.status).toBe(200)
        expect(answered.headers["set-cookie"]).toBeUndefined()
        expect(yield* expiry()).toEqual(before)
        expect(settings.cookieName).toBe("svc_shared.session_token")
      }))
  })
})
