/**
 * SPEC 8 "exchange total 5 minutes". The client listener takes the limit as a parameter whose
 * default is SPEC's; the real process runs with that default (its start-up line says so), and the
 * behaviour is tested on a second listener, in this process, with a short limit: a replica on the
 * same database, so it serves the sessions the real service admits. At the limit an exchange that
 * has not answered is 504 (whatever it waits for: the code host, a mint, the client's body), one
 * already answering is cut, the code host's request is abandoned, the cut is logged, the slot
 * comes back, and the session goes on serving.
 */
import { RepositorySessionsRepo } from "@svc/core/db"
import { CredentialServiceLimits as L } from "@svc/core/schema"
import { type Context, Duration, Effect, Exit, Layer, Runtime, Scope } from "effect"
import { createPrivateKey } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { pgClientLayer } from "../../../testing/database.js"
import { freePort } from "../../../testing/process.js"
import { LogCapture } from "../../../testing/server.js"
import { listenerLayer } from "../src/listener/server.js"
import { API_ORIGIN, GIT_ORIGIN, makeCodeHostClient } from "../src/upstream/codeHost.js"
import { makeTokenCache, SessionTokens } from "../src/upstream/tokenCache.js"
import { countedGet, rawExchange } from "./support/listenerClient.js"
import { logLines } from "./support/logs.js"
import { useCredentialService, WIDGETS } from "./support/service.js"
import { waitFor } from "./support/waitFor.js"

const LIMIT_MS = 1500
const world = useCredentialService({
  codeHost: [WIDGETS],
  cleanup: (host) => {
    host.gitOutput(false)
    host.stallMints(false)
  }
})
const host = () => world.host()
const open = world.open
let scope: Scope.CloseableScope | undefined
let listenerUrl = ""
let logs: Context.Tag.Service<LogCapture>

beforeAll(async () => {
  const port = await freePort()
  listenerUrl = `http://127.0.0.1:${port}`
  const key = createPrivateKey(host().privateKeyPem)
  const client = makeCodeHostClient(world.registry, key, new Map([[API_ORIGIN, host().url], [GIT_ORIGIN, host().url]]))
  const tokens = Layer.scoped(SessionTokens, Effect.flatMap(RepositorySessionsRepo, (repo) => makeTokenCache(client, repo)))
  const listener = listenerLayer({ host: "127.0.0.1", port, listenerUrl, client }, { exchange: Duration.millis(LIMIT_MS) }).pipe(
    Layer.provide(tokens),
    Layer.provideMerge(RepositorySessionsRepo.Default),
    Layer.provide(pgClientLayer(world.databaseUrl()))
  )
  scope = Effect.runSync(Scope.make())
  // Built on a runtime that carries the capturing logger, so the listener's own runtime logs into it.
  const capturing = await Effect.runPromise(Scope.extend(Layer.toRuntime(LogCapture.layer), scope))
  logs = Runtime.runSync(capturing)(LogCapture)
  await Runtime.runPromise(capturing)(Layer.buildWithScope(listener, scope))
}, 60_000)

// Registered after the world's: runs before it, so the listener closes before the database goes.
afterAll(async () => {
  if (scope !== undefined) await Effect.runPromise(Scope.close(scope, Exit.void))
})

const REPO = "/api/v3/repos/acme/widgets"
const REFS = "/acme/widgets.git/info/refs?service=git-upload-pack"
const OVERTIME = "the exchange took longer than the credential service allows"
const CUT = "exchange cut off at its time limit"
const read = (bearer: string) => fetch(`${listenerUrl}${REPO}`, { headers: { authorization: `token ${bearer}` } })
const cutsOf = (sessionId: string) =>
  logs.entries.filter((entry) => JSON.stringify(entry.message) === JSON.stringify([CUT]) && entry.annotations.sessionId === sessionId).map((entry) => [
    entry.level,
    entry.annotations.limitMs
  ])

const expectOvertime = async (response: Response) =>
  expect([response.status, response.headers.get("content-type"), await response.json()]).toEqual([
    504,
    "application/json",
    { message: OVERTIME }
  ])

describe("exchange time limit", () => {
  it("the real process runs with SPEC's 5 minutes", () => {
    const started = logLines(world.service().process.output()).filter((line) =>
      typeof line.message === "string" && line.message.startsWith("credential service client listener on")
    )
    expect(started.map((line) => line.annotations.exchangeLimitMs)).toEqual([5 * 60 * 1000])
    expect(L.exchangeTotalSeconds).toBe(300)
  })

  it("exchanges the code host does not answer are 504 at the limit; their slots come back; the session goes on", async () => {
    const { bearer, sessionId } = await open()
    // Minted first, so the held reads below wait for the code host only.
    expect((await read(bearer)).status).toBe(200)
    const release = host().holdRepositoryReads()
    try {
      const held = await Promise.all(Array.from({ length: L.exchangesPerSession }, () => read(bearer)))
      for (const response of held) await expectOvertime(response)
      // The code host still holds every read, yet the session has its four slots back.
      const refs = await Promise.all(Array.from({ length: L.exchangesPerSession }, () =>
        fetch(`${listenerUrl}${REFS}`, { headers: { authorization: `token ${bearer}` } })
      ))
      for (const response of refs) expect([response.status, (await response.text()).includes("refs/heads/main")]).toEqual([200, true])
    } finally {
      release()
    }
    expect(cutsOf(sessionId)).toEqual(Array.from({ length: L.exchangesPerSession }, () => ["WARN", LIMIT_MS]))
    expect(logs.entries.some((entry) => JSON.stringify(entry).includes(bearer))).toBe(false)
    expect((await read(bearer)).status).toBe(200)
  })

  it("an answer still streaming at the limit is cut, and the code host's stream is abandoned", async () => {
    const { bearer, sessionId } = await open()
    const closedBefore = host().gitOutputClosed()
    host().gitOutput({ bytes: 1024 * 1024, stall: true })
    try {
      const cut = await countedGet(listenerUrl, REFS, bearer)
      expect([cut.status, cut.bytes, cut.complete]).toEqual([200, 1024 * 1024, false])
      await waitFor("the code host sees the Git output abandoned", host().gitOutputClosed, (n) => n > closedBefore)
    } finally {
      host().gitOutput(false)
    }
    expect(cutsOf(sessionId)).toEqual([["WARN", LIMIT_MS]])
    expect((await read(bearer)).status).toBe(200)
  })

  it("a client that has not sent its whole body by the limit gets 504 and the connection is closed", async () => {
    const { bearer, sessionId } = await open()
    const head = [
      "POST /acme/widgets.git/git-upload-pack HTTP/1.1",
      "Host: listener",
      `Authorization: token ${bearer}`,
      "Content-Type: application/x-git-upload-pack-request",
      "Content-Length: 1000"
    ].join("\r\n")
    const answer = await rawExchange(listenerUrl, `${head}\r\n\r\n0032want`)
    const [statusLine] = answer.split("\r\n")
    expect(statusLine).toBe("HTTP/1.1 504 Gateway Timeout")
    expect(answer).toContain("\r\nconnection: close\r\n")
    expect(answer).toContain("\r\ncontent-type: text/plain; charset=utf-8\r\n")
    expect(answer).toContain(`\r\n${OVERTIME}\n\r\n`)
    expect(cutsOf(sessionId)).toEqual([["WARN", LIMIT_MS]])
    expect((await read(bearer)).status).toBe(200)
  })

  // Last: the stalled mint keeps this listener's one provider permit for the provider-action limit.
  it("an exchange waiting on a mint is 504 at the limit, not when the mint gives up", async () => {
    const { bearer, sessionId } = await open()
    host().stallMints(true)
    try {
      await expectOvertime(await read(bearer))
      // What it waited on was the mint the code host holds.
      expect(host().stalledMints().started).toBe(1)
    } finally {
      host().stallMints(false)
    }
    expect(cutsOf(sessionId)).toEqual([["WARN", LIMIT_MS]])
  })
})
