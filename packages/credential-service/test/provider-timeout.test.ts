/**
 * SPEC 8 "provider action at most 30 s", in a real credential service against the loopback code
 * host: a token request the code host starts answering and then stalls is cut off at 30 s. The
 * exchange waiting on it is 504, the cut is logged, the code host's request is abandoned, and the
 * one provider permit is free again: a mint queued behind it runs, and the session is served.
 */
import { CredentialServiceLimits as L } from "@svc/core/schema"
import { describe, expect, it } from "vitest"
import { awaitLines } from "./support/logs.js"
import { useCredentialService, WIDGETS } from "./support/service.js"
import { waitFor } from "./support/waitFor.js"

const world = useCredentialService({ codeHost: [WIDGETS], cleanup: (host) => host.stallMints(false) })
const host = () => world.host()
const service = () => world.service()
const open = async () => (await world.open()).bearer

const REPO = "/api/v3/repos/acme/widgets"
const read = (bearer: string) => fetch(`${service().listenerUrl}${REPO}`, { headers: { authorization: `token ${bearer}` } })
const mints = () => host().requests.filter((line) => line === `POST /app/installations/${host().installationId}/access_tokens`).length
const CUT = "provider action cut off at its time limit: mint an installation token"

describe("provider action time limit", () => {
  it("a mint the code host stalls is cut off at 30 s: 504, logged, abandoned upstream; the mint queued behind it runs", async () => {
    const first = await open()
    const second = await open()
    host().stallMints(true)
    const stalled = read(first)
    await waitFor("the code host receives the stalled mint", host().stalledMints, (m) => m.started === 1)
    host().stallMints(false)
    // One provider action at a time: this session's mint waits for the stalled one.
    const queued = read(second)

    const cut = await stalled
    expect([cut.status, cut.headers.get("content-type"), await cut.json()]).toEqual([
      504,
      "application/json",
      { message: "the code host did not answer in time" }
    ])
    const served = await queued
    expect([served.status, ((await served.json()) as { id: number }).id]).toEqual([200, 1001])
    expect(await waitFor("the stalled mint's connection is closed", host().stalledMints, (m) => m.closed > 0)).toEqual({
      started: 1,
      closed: 1
    })
    expect((await awaitLines(service().process.output, CUT, 1)).map((line) => [line.level, line.annotations.limitSeconds])).toEqual([
      ["WARN", L.providerActionSeconds]
    ])
    expect(L.providerActionSeconds).toBe(30)

    // The session whose mint was cut is not closed by it: its next exchange mints and is served.
    const again = await read(first)
    expect(again.status).toBe(200)
    expect(mints()).toBe(3)
  }, 180_000)
})
