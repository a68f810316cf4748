/**
 * The private control interface (SPEC 4.8) of a real `svc credential-service` process, over its
 * Unix socket, with sessions in a real PostgreSQL.
 */
import * as fs from "node:fs"
import { describe, expect, it } from "vitest"
import {
  admissionId,
  frozenGrant,
  NS_A,
  NS_B,
  openSession,
  queryDatabase,
  socketRequest
} from "../../../testing/credentialService.js"
import { useCredentialService } from "./support/service.js"

const world = useCredentialService()
const registry = world.registry
const service = () => world.service()
const socketPath = () => world.socketPath()

const REQUEST_ID = /^req_[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/
const SESSION_ID = /^rs_[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/
const grantA = frozenGrant(registry, NS_A, "widgets", "git-write")

interface ErrorAnswer {
  readonly status: number
  readonly body: { readonly error: { readonly code: string; readonly message: string }; readonly meta: { readonly requestId: string } }
}

const expectError = (response: ErrorAnswer, status: number, code: string, message: string) => {
  expect(response.status).toBe(status)
  expect(response.body.error.code).toBe(code)
  expect(response.body.error.message).toBe(message)
  expect(response.body.meta.requestId).toMatch(REQUEST_ID)
}

const sql = (text: string, params: ReadonlyArray<unknown> = []) => queryDatabase(world.databaseUrl(), text, params)
const sessionCount = async () => Number((await sql(`SELECT count(*)::int AS n FROM repository_sessions WHERE state <> 'DISPOSED'`)).rows[0].n)

describe("control interface over the Unix socket", () => {
  it("the socket is mode 0600 and advertises durableAdmissionVersion 1", async () => {
    expect(fs.statSync(socketPath()).mode & 0o777).toBe(0o600)
    const response = await socketRequest(socketPath(), "GET", "/v1/capabilities")
    expect(response.status).toBe(200)
    expect(response.body.data).toEqual({ durableAdmissionVersion: 1 })
  })

  it("201 issues the bearer once; a repeat with the same id and body is 200 with status only", async () => {
    const id = admissionId()
    const body = { durationSeconds: 600, grant: grantA }
    const first = await openSession(socketPath(), id, body)
    expect(first.status).toBe(201)
    const { session, client, bearer } = first.body.data
    expect(bearer).toMatch(/^svcrs_[A-Za-z0-9_-]{43}$/)
    expect(session.sessionId).toMatch(SESSION_ID)
    expect(session).toEqual({
      sessionId: session.sessionId,
      state: "active",
      deadlineWallMs: session.deadlineWallMs,
      binding: { providerInstanceId: "github-test", repositoryId: "1001", grantId: grantA.fingerprint },
      profile: "git-write",
      cleanup: { tokens: "pending" }
    })
    expect(Math.abs(session.deadlineWallMs - (Date.now() + 600_000))).toBeLessThan(30_000)
    expect(client).toEqual({
      repository: "acme/widgets",
      listenerUrl: service().listenerUrl,
      gitUrl: `${service().listenerUrl}/acme/widgets.git`,
      apiUrl: `${service().listenerUrl}/api/v3`,
      username: "x-access-token"
    })

    const repeat = await openSession(socketPath(), id, body)
    expect(repeat.status).toBe(200)
    expect(repeat.body.data).toEqual({ session })
    expect(repeat.text).not.toContain(bearer)

    // Stored as a digest only.
    const stored = await sql(`SELECT * FROM repository_sessions WHERE id = $1`, [session.sessionId])
    expect(JSON.stringify(stored.rows)).not.toContain(bearer)
    expect(JSON.stringify(stored.rows)).not.toContain(bearer.slice(6))
    expect(service().process.output()).not.toContain(bearer.slice(6))
  })

  it("a seen admission id with a different duration, profile or grant is refused with 409", async () => {
    const id = admissionId()
    expect((await openSession(socketPath(), id, { durationSeconds: 600, grant: grantA })).status).toBe(201)
    const before = await sessionCount()
    for (const changed of [
      { durationSeconds: 601, grant: grantA },
      { durationSeconds: 600, profile: "git-read", grant: grantA },
      { durationSeconds: 600, grant: frozenGrant(registry, NS_A, "widgets", "git-read") }
    ]) {
      expectError(
        await openSession(socketPath(), id, changed),
        409,
        "RESOURCE_CONFLICT",
        "X-Admission-Id was already used for a different session request"
      )
    }
    expect(await sessionCount()).toBe(before)
  })

  it("unseen admission ids must be well-formed, under 60 s old and not future-dated", async () => {
    const body = { durationSeconds: 600, grant: grantA }
    const before = await sessionCount()
    const malformed = [
      "not-an-id",
      `${Date.now()}-${crypto.randomUUID().toUpperCase()}`,
      `${Date.now()}${crypto.randomUUID()}`,
      `0${Date.now()}-${crypto.randomUUID()}`
    ]
    for (const id of malformed) {
      const response = await openSession(socketPath(), id, body)
      expectError(response, 400, "INVALID_REQUEST", "X-Admission-Id must be a 13-digit millisecond timestamp, a hyphen and a lowercase UUIDv4")
      expect(response.body.error.details).toEqual([{ code: "INVALID_FORMAT", path: "/headers/x-admission-id" }])
    }
    const stale = await openSession(socketPath(), admissionId(61_000), body)
    expectError(stale, 400, "INVALID_REQUEST", "X-Admission-Id is 60 seconds old or older and was not seen before")
    const future = await openSession(socketPath(), admissionId(-30_000), body)
    expectError(future, 400, "INVALID_REQUEST", "X-Admission-Id is dated in the future")
    const missing = await socketRequest(socketPath(), "POST", "/v1/sessions", {
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body)
    })
    expect(missing.status).toBe(400)
    expect(missing.body.error.code).toBe("INVALID_REQUEST")
    expect(await sessionCount()).toBe(before)
  })

  it("refuses grants the registry does not back, and profiles or durations beyond them", async () => {
    const before = await sessionCount()
    const cases: Array<[unknown, number, string, string]> = [
      [{ durationSeconds: 600, grant: { ...grantA, namespaceId: NS_B } }, 409, "RESOURCE_CONFLICT", "the grant's profile is not allowed for this repository and Namespace"],
      [{ durationSeconds: 600, grant: { ...grantA, repositoryRef: "gadgets" } }, 409, "RESOURCE_CONFLICT", "the repository is not approved for the grant's Namespace"],
      [{ durationSeconds: 600, grant: { ...grantA, fingerprint: `sha256:${"0".repeat(64)}` } }, 409, "RESOURCE_CONFLICT", "the grant no longer matches the registry; deploy again"],
      [{ durationSeconds: 600, profile: "git-full", grant: grantA }, 409, "RESOURCE_CONFLICT", "the requested profile is wider than the grant's profile"],
      [{ durationSeconds: 7200, grant: grantA }, 400, "INVALID_REQUEST", "durationSeconds is longer than the registry's maximumDurationSeconds"]
    ]
    for (const [body, status, code, message] of cases) {
      expectError(await openSession(socketPath(), admissionId(), body), status, code, message)
    }
    // A Namespace B grant for git-read is fine: B is approved read-only.
    const readB = await openSession(socketPath(), admissionId(), {
      durationSeconds: 120,
      grant: frozenGrant(registry, NS_B, "widgets", "git-read")
    })
    expect(readB.status).toBe(201)
    expect(readB.body.data.session.profile).toBe("git-read")
    expect(await sessionCount()).toBe(before + 1)
  })

  it("validates the body: unknown fields, types, bounds; 415 and 413 before decoding", async () => {
    const invalid = await openSession(socketPath(), admissionId(), {
      durationSeconds: 30,
      profile: "admin",
      grant: { ...grantA, extra: 1 }
    })
    expect(invalid.status).toBe(400)
    expect(invalid.body.error.code).toBe("INVALID_REQUEST")
    expect(invalid.body.error.details).toEqual([
      { code: "INVALID_VALUE", path: "/durationSeconds" },
      { code: "INVALID_VALUE", path: "/profile" },
      { code: "UNKNOWN_FIELD", path: "/grant/extra" }
    ])
    const text = await socketRequest(socketPath(), "POST", "/v1/sessions", {
      headers: { "content-type": "text/plain", "x-admission-id": admissionId() },
      body: "{}"
    })
    expect(text.status).toBe(415)
    expect(text.body.error.code).toBe("UNSUPPORTED_MEDIA_TYPE")
    // SPEC 4.8: control bodies at most 16 KiB: exactly 16384 bytes are read (and refused for `pad`), one more is 413.
    const padded = (bytes: number) => {
      const empty = JSON.stringify({ durationSeconds: 600, grant: grantA, pad: "" })
      return JSON.stringify({ durationSeconds: 600, grant: grantA, pad: "x".repeat(bytes - empty.length) })
    }
    const post = (body: string) =>
      socketRequest(socketPath(), "POST", "/v1/sessions", { headers: { "content-type": "application/json", "x-admission-id": admissionId() }, body })
    const limit = await post(padded(16 * 1024))
    expect([limit.status, limit.body.error.details]).toEqual([400, [{ code: "UNKNOWN_FIELD", path: "/pad" }]])
    const big = await post(padded(16 * 1024 + 1))
    expect(big.status).toBe(413)
    expect(big.body.error.code).toBe("PAYLOAD_TOO_LARGE")
  })

  it("GET status and POST close; close is immediate and repeatable; unknown ids are 404", async () => {
    const opened = await openSession(socketPath(), admissionId(), { durationSeconds: 600, grant: grantA })
    const { sessionId } = opened.body.data.session
    const status = await socketRequest(socketPath(), "GET", `/v1/sessions/${sessionId}`)
    expect(status.status).toBe(200)
    expect(status.body.data).toEqual(opened.body.data.session)
    const closed = await socketRequest(socketPath(), "POST", `/v1/sessions/${sessionId}/close`)
    expect(closed.status).toBe(200)
    // No token was ever minted for it, so there is nothing left to revoke.
    expect(closed.body.data).toEqual({ ...opened.body.data.session, state: "CLOSED", cleanup: { tokens: "settled" } })
    const again = await socketRequest(socketPath(), "POST", `/v1/sessions/${sessionId}/close`)
    expect(again.body.data).toEqual(closed.body.data)
    expect((await socketRequest(socketPath(), "GET", `/v1/sessions/${sessionId}`)).body.data.state).toBe("CLOSED")
    for (const id of ["rs_00000000-0000-4000-8000-000000000000", "nope"]) {
      expectError(await socketRequest(socketPath(), "GET", `/v1/sessions/${id}`), 404, "NOT_FOUND", "no such session")
      expectError(await socketRequest(socketPath(), "POST", `/v1/sessions/${id}/close`), 404, "NOT_FOUND", "no such session")
    }
  })

  it("an expired session reports CLOSED", async () => {
    const opened = await openSession(socketPath(), admissionId(), { durationSeconds: 60, grant: grantA })
    const { sessionId } = opened.body.data.session
    await sql(`UPDATE repository_sessions SET deadline = now() - interval '1 second' WHERE id = $1`, [sessionId])
    const status = await socketRequest(socketPath(), "GET", `/v1/sessions/${sessionId}`)
    expect(status.body.data.state).toBe("CLOSED")
  })

  it("holds at most 16 undisposed sessions; the 17th is refused", async () => {
    const open = await sessionCount()
    for (let i = open; i < 16; i++) {
      expect((await openSession(socketPath(), admissionId(), { durationSeconds: 60, grant: grantA })).status).toBe(201)
    }
    expectError(
      await openSession(socketPath(), admissionId(), { durationSeconds: 60, grant: grantA }),
      409,
      "RESOURCE_CONFLICT",
      "the credential service holds its limit of 16 sessions"
    )
    expect(await sessionCount()).toBe(16)
  })

  it("sessions survive a restart: status and repeats are answered by the new process", async () => {
    const id = admissionId()
    const body = { durationSeconds: 600, grant: grantA }
    await sql(`UPDATE repository_sessions SET state = 'DISPOSED'`)
    const first = await openSession(socketPath(), id, body)
    expect(first.status).toBe(201)
    await service().process.stop()
    await world.restart()
    const status = await socketRequest(socketPath(), "GET", `/v1/sessions/${first.body.data.session.sessionId}`)
    expect(status.body.data).toEqual(first.body.data.session)
    const repeat = await openSession(socketPath(), id, body)
    expect(repeat.status).toBe(200)
    expect(repeat.body.data).toEqual({ session: first.body.data.session })
  }, 120_000)
})
