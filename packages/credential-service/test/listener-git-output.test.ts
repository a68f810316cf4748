/**
 * SPEC 8 "Git output 256 MiB": what the code host answers to a Git request is passed through the
 * client listener of a real credential service up to 256 MiB. A stream that would pass it is cut
 * (its status is already sent) after at most 256 MiB, the code host's stream is abandoned and the
 * cut is logged; a declared length over it is refused with 502 before anything is sent; exactly
 * 256 MiB is served whole. The session goes on serving. Bodies are streamed and counted, never kept.
 */
import { CredentialServiceLimits as L } from "@svc/core/schema"
import { beforeAll, describe, expect, it } from "vitest"
import { countedGet } from "./support/listenerClient.js"
import { awaitLines, linesWith } from "./support/logs.js"
import { useCredentialService, WIDGETS } from "./support/service.js"
import { waitFor } from "./support/waitFor.js"

const world = useCredentialService({ codeHost: [WIDGETS], cleanup: (host) => host.gitOutput(false) })
const host = () => world.host()
const service = () => world.service()
let bearer = ""
let sessionId = ""

beforeAll(async () => {
  ;({ bearer, sessionId } = await world.open())
})

const REFS = "/acme/widgets.git/info/refs?service=git-upload-pack"
const CUT = "Git output cut off at its size limit"

/** The session still clones as usual: the real advertisement of the real repository. */
const expectHealthy = async () => {
  const refs = await fetch(`${service().listenerUrl}${REFS}`, { headers: { authorization: `token ${bearer}` } })
  expect([refs.status, refs.headers.get("content-type")]).toEqual([200, "application/x-git-upload-pack-advertisement"])
  expect(await refs.text()).toContain("refs/heads/main")
}

describe("Git output limit", () => {
  it("exactly 256 MiB is served whole", async () => {
    host().gitOutput({ bytes: L.gitOutputBytes })
    try {
      const served = await countedGet(service().listenerUrl, REFS, bearer)
      expect([served.status, served.headers["content-type"], served.bytes, served.complete]).toEqual([
        200,
        "application/x-git-upload-pack-result",
        L.gitOutputBytes,
        true
      ])
    } finally {
      host().gitOutput(false)
    }
    expect(linesWith(service().process.output(), CUT)).toEqual([])
    await expectHealthy()
  }, 120_000)

  it("a stream passing 256 MiB is cut after at most 256 MiB; the code host's stream is abandoned; the cut is logged", async () => {
    const closedBefore = host().gitOutputClosed()
    // Never ends on its own: only the listener's cut can end this exchange.
    host().gitOutput({ bytes: L.gitOutputBytes + 1024 * 1024, stall: true })
    try {
      const cut = await countedGet(service().listenerUrl, REFS, bearer)
      expect([cut.status, cut.complete]).toEqual([200, false])
      expect(cut.bytes).toBeLessThanOrEqual(L.gitOutputBytes)
      await waitFor("the code host sees the Git output abandoned", host().gitOutputClosed, (n) => n > closedBefore)
    } finally {
      host().gitOutput(false)
    }
    const lines = await awaitLines(service().process.output, CUT, 1)
    expect(lines.map((line) => [line.level, line.annotations.sessionId, line.annotations.limitBytes])).toEqual([
      ["WARN", sessionId, L.gitOutputBytes]
    ])
    expect(service().process.output()).not.toContain(bearer)
    await expectHealthy()
  }, 120_000)

  it("a declared length over 256 MiB is 502 before anything is sent; 256 MiB declared is served", async () => {
    const before = linesWith(service().process.output(), CUT).length
    host().gitOutput({ bytes: L.gitOutputBytes + 1, declareLength: true, stall: true })
    try {
      const refused = await fetch(`${service().listenerUrl}${REFS}`, { headers: { authorization: `token ${bearer}` } })
      expect([refused.status, refused.headers.get("content-type"), await refused.text()]).toEqual([
        502,
        "text/plain; charset=utf-8",
        "the code host's response is larger than the credential service allows\n"
      ])
      host().gitOutput({ bytes: L.gitOutputBytes, declareLength: true })
      const served = await countedGet(service().listenerUrl, REFS, bearer)
      expect([served.status, served.bytes, served.complete]).toEqual([200, L.gitOutputBytes, true])
    } finally {
      host().gitOutput(false)
    }
    expect((await awaitLines(service().process.output, CUT, before + 1)).length).toBe(before + 1)
    await expectHealthy()
  }, 120_000)
})
