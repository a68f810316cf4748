/**
 * The App API answers the credential service reads are capped at PROVIDER_ANSWER_BYTES (8 MiB;
 * docs/decisions/repository-credentials.md): a token answer past it, declared or streamed, is
 * refused without reading the rest (502, logged, the code host's connection closed), and the next
 * mint is served. An answer just under the cap is read and used.
 */
import { describe, expect, it } from "vitest"
import { PROVIDER_ANSWER_BYTES } from "../src/upstream/codeHost.js"
import { awaitLines } from "./support/logs.js"
import { useCredentialService, WIDGETS } from "./support/service.js"
import { waitFor } from "./support/waitFor.js"

const world = useCredentialService({ codeHost: [WIDGETS], cleanup: (host) => host.padMints(false) })
const host = () => world.host()
const service = () => world.service()
const open = async () => (await world.open()).bearer

const REPO = "/api/v3/repos/acme/widgets"
const read = (bearer: string) => fetch(`${service().listenerUrl}${REPO}`, { headers: { authorization: `token ${bearer}` } })
const REFUSED = "provider answer refused at its size limit: mint an installation token"
// Far past the cap, so that the code host is still sending when the service hangs up (loopback
// buffers hold megabytes).
const OVER = 4 * PROVIDER_ANSWER_BYTES

describe("provider answer size limit", () => {
  it("is 8 MiB", () => {
    expect(PROVIDER_ANSWER_BYTES).toBe(8 * 1024 * 1024)
  })

  it("a token answer past the cap, its length declared or not, is refused unread: 502, logged, closed; the next mint is served", async () => {
    const bearer = await open()
    for (const [declared, refusals] of [[true, 1], [false, 2]] as const) {
      host().padMints({ bytes: OVER, declared })
      const refused = await read(bearer)
      expect([refused.status, await refused.json()]).toEqual([502, { message: "the code host could not be reached" }])
      expect(await waitFor("the padded answer's connection is closed", host().paddedMintsClosed, (n) => n === refusals)).toBe(refusals)
      const lines = await awaitLines(service().process.output, REFUSED, refusals)
      expect(lines.map((line) => [line.level, line.annotations.limitBytes])).toEqual(
        Array.from({ length: refusals }, () => ["WARN", PROVIDER_ANSWER_BYTES])
      )
    }
    host().padMints(false)
    const served = await read(bearer)
    expect([served.status, ((await served.json()) as { id: number }).id]).toEqual([200, 1001])
  }, 120_000)

  it("a token answer just under the cap is read and its token used", async () => {
    const bearer = await open()
    const closed = host().paddedMintsClosed()
    host().padMints({ bytes: PROVIDER_ANSWER_BYTES - 1024, declared: false })
    const served = await read(bearer)
    expect([served.status, ((await served.json()) as { id: number }).id]).toEqual([200, 1001])
    expect(host().paddedMintsClosed() - closed).toBe(0)
  }, 120_000)
})
