/**
 * Two replicas of the credential service on one database (DESIGN §12 "a second replica ...
 * continues existing sessions"): the real process (A, which the control socket reaches) and a
 * listener with its own token cache in this process (B). Each mints its own installation token
 * for a session; only the process holding a token can revoke it (UPSTREAMS: `DELETE
 * /installation/token` with the token). A close on A must not report `cleanup.tokens` settled
 * while B's token is live (SPEC 3: `DISPOSED` requires resolved token obligations), and B must
 * not serve a closed session with the token it has cached (the session is read per exchange).
 */
import { RepositorySessionsRepo } from "@svc/core/db"
import { Effect, Exit, Layer, Scope } from "effect"
import { createPrivateKey } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { queryDatabase, socketRequest } from "../../../testing/credentialService.js"
import { pgClientLayer } from "../../../testing/database.js"
import { freePort } from "../../../testing/process.js"
import { listenerLayer } from "../src/listener/server.js"
import { API_ORIGIN, GIT_ORIGIN, makeCodeHostClient } from "../src/upstream/codeHost.js"
import { makeTokenCache, SessionTokens } from "../src/upstream/tokenCache.js"
import { splitRequest } from "./support/listenerClient.js"
import { useCredentialService, WIDGETS } from "./support/service.js"

const world = useCredentialService({ codeHost: [WIDGETS] })
const host = () => world.host()
let scope: Scope.CloseableScope | undefined
let replicaUrl = ""

beforeAll(async () => {
  const port = await freePort()
  replicaUrl = `http://127.0.0.1:${port}`
  const client = makeCodeHostClient(world.registry, createPrivateKey(host().privateKeyPem), new Map([[API_ORIGIN, host().url], [GIT_ORIGIN, host().url]]))
  const tokens = Layer.scoped(SessionTokens, Effect.flatMap(RepositorySessionsRepo, (repo) => makeTokenCache(client, repo)))
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
})
