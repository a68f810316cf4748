/**
 * The 60 s credential margin (SPEC 8 "exchange total 5 minutes with 60 s credential margin"): an
 * installation token is reused for a session while more than 60 s of it is left by its
 * `expires_at`, and replaced by a fresh mint once 60 s or less is left. Our clock is Effect's
 * TestClock, and the loopback code host judges App JWTs by the same time, so the edge is exact.
 */
import { Effect, TestClock, TestContext } from "effect"
import { createPrivateKey } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { sampleRegistry } from "../../../testing/credentialService.js"
import { type FakeCodeHost, startFakeCodeHost } from "../../../testing/fakeCodeHost.js"
import { API_ORIGIN, GIT_ORIGIN, makeCodeHostClient } from "../src/upstream/codeHost.js"
import { makeTokenCache } from "../src/upstream/tokenCache.js"
import { memoryLedger } from "./support/ledger.js"
import { WIDGETS } from "./support/service.js"

let host: FakeCodeHost
let ourMs = 0

beforeAll(async () => {
  host = await startFakeCodeHost([WIDGETS])
  host.setJwtClock(() => ourMs)
})
afterAll(() => host?.close())

const setTime = (ms: number) => Effect.zipRight(Effect.sync(() => void (ourMs = ms)), TestClock.setTime(ms))

describe("credential margin", () => {
  it("a token with more than 60 s left is reused; with 60 s left it is replaced", async () => {
    const client = makeCodeHostClient(
      sampleRegistry({ appId: host.appId, installationId: host.installationId }),
      createPrivateKey(host.privateKeyPem),
      new Map([[API_ORIGIN, host.url], [GIT_ORIGIN, host.url]])
    )
    const { ledger, noted } = memoryLedger()
    const session = { id: "rs_margin", repositoryId: String(WIDGETS.id), profile: "git-read" as const }
    const seen = await Effect.runPromise(Effect.gen(function* () {
      yield* setTime(Date.now())
      const cache = yield* makeTokenCache(client, ledger)
      const first = yield* cache.tokenFor(session)
      const expiresAtMs = noted[0]!.expiresAtMs
      yield* setTime(expiresAtMs - 60_001)
      const reused = yield* cache.tokenFor(session)
      yield* setTime(expiresAtMs - 60_000)
      const replaced = yield* cache.tokenFor(session)
      return { first, reused, replaced }
    }).pipe(Effect.provide(TestContext.TestContext)))

    expect(seen.reused).toBe(seen.first)
    expect(seen.replaced).not.toBe(seen.first)
    expect(host.tokens.map((t) => t.token)).toEqual([seen.first, seen.replaced])
    expect(noted.map((t) => t.sessionId)).toEqual(["rs_margin", "rs_margin"])
  })
})
