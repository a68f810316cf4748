/**
 * Two replicas of the credential service on one database (DESIGN §12 "a second replica ...
 * continues existing sessions"): the real process (A, which the control socket reaches) and a
 * listener with its own token cache in this process (B). Each mints its own installation token
 * for a session; only the process holding a token can revoke it (UPSTREAMS: `DELETE
 * /installation/token` with the token). A close on A must not report `cleanup.tokens` settled
 * while B's token is live (SPEC 3: `DISPOSED` requires resolved token obligations), and B must
 * not serve a closed session with the token it has cached (the session is read per exchange).
 * Nor may an idle holder keep a token of an ended session until it expires: every replica looks
 * for such sessions every few seconds and revokes what it holds of them.
 */
import { RepositorySessionsRepo } from "@svc/core/db"
import { Duration, Effect, Exit, Fiber, Layer, Scope } from "effect"
import { createPrivateKey } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { queryDatabase, socketRequest } from "../../../testing/credentialService.js"
import { pgClientLayer } from "../../../testing/database.js"
import { freePort } from "../../../testing/process.js"
import { listenerLayer } from "../src/listener/server.js"
import { API_ORIGIN, GIT_ORIGIN, makeCodeHostClient } from "../src/upstream/codeHost.js"
import { ENDED_SESSIONS_CHECK, makeTokenCache, revokeEndedSessions, SessionTokens, type TokenCache } from "../src/upstream/tokenCache.js"
import { splitRequest } from "./support/listenerClient.js"
import { useCredentialService, WIDGETS } from "./support/service.js"
import { waitFor } from "./support/waitFor.js"

const world = useCredentialService({ codeHost: [WIDGETS] })
const host = () => world.host()
let scope: Scope.CloseableScope | undefined
let replicaUrl = ""
let replicaCache: TokenCache | undefined

beforeAll(async () => {
  const port = await freePort()
  replicaUrl = `http://127.0.0.1:${port}`
  const client = makeCodeHostClient(world.registry, createPrivateKey(host().privateKeyPem), new Map([[API_ORIGIN, host().url], [GIT_ORIGIN, host().url]]))
  // Replica B's check for ended sessions is started by the test that needs it, so the other tests
  // see B learn of a close only through an exchange.
  const tokens = Layer.scoped(
    SessionTokens,
    Effect.flatMap(RepositorySessionsRepo, (repo) => makeTokenCache(client, repo)).pipe(
      Effect.tap((cache) => Effect.sync(() => void (replicaCache = cache)))
    )
  )
  const replica = listenerLayer({ host: "127.0.0.1", port, listenerUrl: replicaUrl, client }).pipe(
    Layer.provide(tokens),
    Layer.provideMerge(RepositorySessionsRepo.Default),
    Layer.provide(pgClientLayer(world.databaseUrl()))
  )
  scope = Effect.runSync(Scope.make())
  await Effect.runPromise(Layer.buildWithScope(replica, scope))
}, 60_000)

// Registered after the world's: runs before it, so the replica closes before the database goes.
afterAll(async () => {
  if (scope !== undefined) await Effect.runPromise(Scope.close(scope, Exit.void))
})

const read = (listenerUrl: string, bearer: string) =>
  fetch(`${listenerUrl}/api/v3/repos/acme/widgets`, { headers: { authorization: `token ${bearer}` } })
const close = (sessionId: string) => socketRequest(world.socketPath(), "POST", `/v1/sessions/${sessionId}/close`)
const status = (sessionId: string) => socketRequest(world.socketPath(), "GET", `/v1/sessions/${sessionId}`)
const revokedSince = (before: number) => host().tokens.slice(before).map((t) => t.revoked)
const CLOSED = "the session is closed, expired or unknown"

/** The session's status once its cleanup settled: the holder marks it just after the code host saw the revocation. */
const settledStatus = async (sessionId: string) => {
  const deadline = Date.now() + 10_000
  for (;;) {
    const answer = await status(sessionId)
    expect(answer.status).toBe(200)
    if (answer.body.data.cleanup.tokens === "settled" || Date.now() > deadline) return answer.body.data
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

describe("a session served by two replicas", () => {
  it("a close on one replica leaves cleanup pending while the other holds a live token, which it revokes on its next exchange", async () => {
    const { bearer, sessionId } = await world.open()
    const before = host().tokens.length
    expect((await read(world.service().listenerUrl, bearer)).status).toBe(200)
    expect((await read(replicaUrl, bearer)).status).toBe(200)
    expect(revokedSince(before)).toEqual([false, false])

    const closed = await close(sessionId)
    expect(closed.status).toBe(200)
    expect(closed.body.data).toMatchObject({ sessionId, state: "CLOSED", cleanup: { tokens: "pending" } })
    expect(revokedSince(before)).toEqual([true, false])
    // A repeated close (the worker's cleanup retrying) cannot settle what it does not hold.
    expect((await close(sessionId)).body.data).toMatchObject({ state: "CLOSED", cleanup: { tokens: "pending" } })

    const refused = await read(replicaUrl, bearer)
    expect([refused.status, await refused.json()]).toEqual([401, { message: CLOSED }])
    expect(revokedSince(before)).toEqual([true, true])
    const after = await status(sessionId)
    expect([after.status, after.body.data]).toMatchObject([200, { sessionId, state: "CLOSED", cleanup: { tokens: "settled" } }])
    // Both tokens are accounted for in the store, each revoked by its holder, and neither is in it.
    const rows = await queryDatabase(world.databaseUrl(), `SELECT * FROM repository_session_tokens WHERE session_id = $1`, [sessionId])
    expect(rows.rows.map((r) => r.revoked_at !== null)).toEqual([true, true])
    const stored = JSON.stringify(rows.rows)
    for (const t of host().tokens.slice(before)) expect(stored).not.toContain(t.token)
  })

  it("an exchange on a replica with a cached token is refused when the session closed after its head was checked", async () => {
    const { bearer, sessionId } = await world.open()
    const before = host().tokens.length
    expect((await read(replicaUrl, bearer)).status).toBe(200)
    const exchange = splitRequest(replicaUrl, "/acme/widgets.git/git-upload-pack", bearer)
    // The listener authenticates on the request head; give it that time before the close.
    await new Promise((resolve) => setTimeout(resolve, 500))
    const closed = await close(sessionId)
    expect(closed.body.data).toMatchObject({ sessionId, state: "CLOSED", cleanup: { tokens: "pending" } })

    const answer = await exchange.finish()
    expect([answer.status, answer.text]).toEqual([401, `${CLOSED}\n`])
    expect(revokedSince(before)).toEqual([true])
    expect((await status(sessionId)).body.data).toMatchObject({ state: "CLOSED", cleanup: { tokens: "settled" } })
  })

  it("an idle replica revokes its token of a session closed on another replica, without an exchange", async () => {
    const { bearer, sessionId } = await world.open()
    const before = host().tokens.length
    expect((await read(replicaUrl, bearer)).status).toBe(200)
    const checking = Effect.runFork(revokeEndedSessions(replicaCache!, Duration.millis(100)))
    try {
      // Still active: the check leaves the token alone.
      await new Promise((resolve) => setTimeout(resolve, 300))
      expect(revokedSince(before)).toEqual([false])
      const closed = await close(sessionId)
      expect(closed.body.data).toMatchObject({ sessionId, state: "CLOSED", cleanup: { tokens: "pending" } })
      await waitFor("replica B revokes its token", () => revokedSince(before), (r) => r[0] === true, 10)
      expect(await settledStatus(sessionId)).toMatchObject({ sessionId, state: "CLOSED", cleanup: { tokens: "settled" } })
      const rows = await queryDatabase(world.databaseUrl(), `SELECT revoked_at FROM repository_session_tokens WHERE session_id = $1`, [sessionId])
      expect(rows.rows.map((r) => r.revoked_at !== null)).toEqual([true])
    } finally {
      await Effect.runPromise(Fiber.interrupt(checking))
    }
  })

  it("the service revokes its token of a session past its deadline without an exchange, within its check interval", async () => {
    const { bearer, sessionId } = await world.open()
    const before = host().tokens.length
    expect((await read(world.service().listenerUrl, bearer)).status).toBe(200)
    expect(revokedSince(before)).toEqual([false])
    // The session's deadline passes (durations are at least 60 s: the clock is not waited for).
    await queryDatabase(world.databaseUrl(), `UPDATE repository_sessions SET deadline = now() - interval '1 second' WHERE id = $1`, [sessionId])
    await waitFor("the service revokes its token", () => revokedSince(before), (r) => r[0] === true, Duration.toSeconds(ENDED_SESSIONS_CHECK) * 3)
    expect(await settledStatus(sessionId)).toMatchObject({ sessionId, state: "CLOSED", cleanup: { tokens: "settled" } })
    const refused = await read(world.service().listenerUrl, bearer)
    expect([refused.status, await refused.json()]).toEqual([401, { message: CLOSED }])
    expect(host().tokens.length).toBe(before + 1)
  })
})
