/**
 * Two credential slots per session (SPEC 8): the installation tokens the credential service holds
 * for one session are the current one and the one it replaced; anything older is revoked upstream
 * before another is minted, and close revokes the two left. Against the loopback code host, with
 * tokens that are due for replacement at once (a lifetime inside the 60 s credential margin).
 * Process-local correlations are bounded to twice the session limit (SPEC 8).
 */
import { Effect } from "effect"
import { createPrivateKey } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { sampleRegistry } from "../../../testing/credentialService.js"
import { type FakeCodeHost, startFakeCodeHost } from "../../../testing/fakeCodeHost.js"
import { API_ORIGIN, GIT_ORIGIN, makeCodeHostClient } from "../src/upstream/codeHost.js"
import { makeTokenCache } from "../src/upstream/tokenCache.js"
import { memoryLedger } from "./support/ledger.js"

let host: FakeCodeHost

beforeAll(async () => {
  host = await startFakeCodeHost([{ id: 1001, fullName: "acme/widgets", description: "Widgets" }], { tokenLifetimeMs: 30_000 })
})
afterAll(() => host?.close())

const client = () =>
  makeCodeHostClient(
    sampleRegistry({ appId: host.appId, installationId: host.installationId }),
    createPrivateKey(host.privateKeyPem),
    new Map([[API_ORIGIN, host.url], [GIT_ORIGIN, host.url]])
  )

describe("credential slots per session", () => {
  it("holds at most two tokens per session: each replacement revokes the one before the replaced; close revokes both", async () => {
    const { ledger, noted, revoked } = memoryLedger()
    const cache = await Effect.runPromise(makeTokenCache(client(), ledger))
    const session = { id: "rs_slots", repositoryId: "1001", profile: "git-read" as const }
    const other = { id: "rs_other", repositoryId: "1001", profile: "git-write" as const }

    const used: Array<string> = []
    for (let i = 0; i < 4; i++) used.push(await Effect.runPromise(cache.tokenFor(session)))
    expect(await Effect.runPromise(cache.tokenFor(other))).toBe(host.tokens[4]!.token)
    expect(new Set(used).size).toBe(4)
    expect(host.tokens.map((t) => t.token).slice(0, 4)).toEqual(used)
    // Before the 3rd mint the 1st was revoked, before the 4th the 2nd: two live for the session.
    expect(host.revoked).toEqual(used.slice(0, 2))
    const live = (tokens: ReadonlyArray<string>) => host.tokens.filter((t) => tokens.includes(t.token) && !t.revoked).map((t) => t.token)
    expect(live(used)).toEqual(used.slice(2))
    expect(noted.map((t) => t.sessionId)).toEqual(["rs_slots", "rs_slots", "rs_slots", "rs_slots", "rs_other"])
    // Each revocation is recorded under the id the token was noted with (mint order).
    expect(revoked).toEqual(noted.slice(0, 2).map((t) => t.tokenId))

    expect(await Effect.runPromise(cache.revokeFor(session.id))).toEqual({ revoked: 2, failed: 0 })
    expect([...host.revoked].sort()).toEqual([...used].sort())
    expect([...revoked].sort()).toEqual(noted.slice(0, 4).map((t) => t.tokenId).sort())
    // The other session's token was never touched.
    expect(live([host.tokens[4]!.token])).toEqual([host.tokens[4]!.token])
  })

  it("correlates at most 32 sessions (twice the session limit): the least recently minted one's tokens are revoked to make room", async () => {
    const cache = await Effect.runPromise(makeTokenCache(client(), memoryLedger().ledger))
    const tokenFor = (i: number) => Effect.runPromise(cache.tokenFor({ id: `rs_bound_${i}`, repositoryId: "1001", profile: "git-read" }))
    const revokedBefore = host.revoked.length
    const first = await tokenFor(0)
    const tokens = [first]
    for (let i = 1; i < 32; i++) tokens.push(await tokenFor(i))
    expect(host.revoked.length).toBe(revokedBefore)
    // Session 0 mints again (its token is inside the margin): it becomes the most recent; 1 is now the oldest.
    const again = await tokenFor(0)
    expect(host.revoked.slice(revokedBefore)).toEqual([])
    await tokenFor(32)
    expect(host.revoked.slice(revokedBefore)).toEqual([tokens[1]])
    // What is left for the evicted session is nothing: closing it revokes nothing more.
    expect(await Effect.runPromise(cache.revokeFor("rs_bound_1"))).toEqual({ revoked: 0, failed: 0 })
    expect(await Effect.runPromise(cache.revokeFor("rs_bound_0"))).toEqual({ revoked: 2, failed: 0 })
    expect(host.revoked.slice(revokedBefore)).toEqual([tokens[1], first, again])
  })
})
