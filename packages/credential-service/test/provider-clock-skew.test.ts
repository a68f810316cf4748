/**
 * The provider clock skew allowance (SPEC 8, 60 s). It governs both directions in which the code
 * host's clock meets ours:
 * - the App JWT is issued 60 s in the past, so a host whose clock is up to 60 s behind ours still
 *   sees it issued in the past and mints (against a strict loopback code host that refuses any
 *   `iat` in its future), and a host further behind refuses it;
 * - an installation token this process does not hold (another replica's, or one held before a
 *   restart) is counted as live until 60 s after its `expires_at`, the host's clock, passed on
 *   ours: only then are the session's token obligations resolved (SPEC 3, `cleanup.tokens`).
 * Our clock is Effect's TestClock and the host's an injected one, so the edge is exact.
 */
import { Effect, Either, TestClock, TestContext } from "effect"
import { createPrivateKey } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { queryDatabase, sampleRegistry, socketRequest } from "../../../testing/credentialService.js"
import { type FakeCodeHost, startFakeCodeHost } from "../../../testing/fakeCodeHost.js"
import { API_ORIGIN, GIT_ORIGIN, makeCodeHostClient } from "../src/upstream/codeHost.js"
import { useCredentialService, WIDGETS } from "./support/service.js"

let host: FakeCodeHost

beforeAll(async () => {
  host = await startFakeCodeHost([WIDGETS], { iatLeewaySeconds: 0 })
})
afterAll(() => host?.close())

const world = useCredentialService()
const sql = (text: string, params: ReadonlyArray<unknown> = []) => queryDatabase(world.databaseUrl(), text, params)

/** A mint at `ourMs` on our clock. */
const mintAt = (ourMs: number) => {
  const client = makeCodeHostClient(
    sampleRegistry({ appId: host.appId, installationId: host.installationId }),
    createPrivateKey(host.privateKeyPem),
    new Map([[API_ORIGIN, host.url], [GIT_ORIGIN, host.url]])
  )
  return Effect.runPromise(
    Effect.zipRight(TestClock.setTime(ourMs), Effect.either(client.mint(String(WIDGETS.id), { contents: "read" }))).pipe(
      Effect.provide(TestContext.TestContext)
    )
  )
}

describe("provider clock skew allowance", () => {
  it("a code host whose clock is 60 s behind ours accepts the App JWT; 61 s behind, it refuses it", async () => {
    const ourMs = Date.parse("2026-11-28T12:00:00.250Z")
    try {
      host.setJwtClock(() => ourMs - 60_000)
      const within = await mintAt(ourMs)
      expect(Either.isRight(within)).toBe(true)
      expect(Either.getOrThrow(within).token).toBe(host.tokens[host.tokens.length - 1]!.token)
      const minted = host.tokens.length

      host.setJwtClock(() => ourMs - 61_000)
      const beyond = await mintAt(ourMs)
      expect(Either.isLeft(beyond) && beyond.left.reason).toBe("token request answered 401")
      expect(host.tokens.length).toBe(minted)
    } finally {
      host.setJwtClock(undefined)
    }
  })

  it("an unheld token is pending until 60 s after its expiry has passed on our clock, then settled", async () => {
    const { sessionId } = await world.open()
    const close = () => socketRequest(world.socketPath(), "POST", `/v1/sessions/${sessionId}/close`)
    const tokens = async () => (await socketRequest(world.socketPath(), "GET", `/v1/sessions/${sessionId}`)).body.data.cleanup

    // Expired on our clock 45 s ago: a host 45 s behind still honours it.
    await sql(`INSERT INTO repository_session_tokens (id, session_id, expires_at) VALUES ('rst_skew', $1, now() - interval '45 seconds')`, [sessionId])
    const closed = await close()
    expect([closed.status, closed.body.data.state, closed.body.data.cleanup]).toEqual([200, "CLOSED", { tokens: "pending" }])
    expect(await tokens()).toEqual({ tokens: "pending" })

    // 61 s ago: beyond the allowance, no host within it can honour it any more.
    await sql(`UPDATE repository_session_tokens SET expires_at = now() - interval '61 seconds' WHERE id = 'rst_skew'`)
    const again = await close()
    expect([again.status, again.body.data.state, again.body.data.cleanup]).toEqual([200, "CLOSED", { tokens: "settled" }])
    expect(await tokens()).toEqual({ tokens: "settled" })
  })
})
