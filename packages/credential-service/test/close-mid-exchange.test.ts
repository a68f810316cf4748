/**
 * SPEC 4.8 "immediate local closure": a session closed while a client is still sending an
 * exchange's body (authenticated before the close) gets no code-host token for it. The listener
 * refuses the exchange (401), and a token minted meanwhile is revoked at once, so a closed or
 * disposed session never leaves a live token behind (SPEC 3 "Repository sessions"); when that
 * revocation fails, the close's settled cleanup goes back to pending until the token expires.
 */
import { describe, expect, it } from "vitest"
import { socketRequest } from "../../../testing/credentialService.js"
import { splitRequest } from "./support/listenerClient.js"
import { useCredentialService, WIDGETS } from "./support/service.js"

const world = useCredentialService({ codeHost: [WIDGETS] })

const status = (sessionId: string) => socketRequest(world.socketPath(), "GET", `/v1/sessions/${sessionId}`)

/** A session closed (with nothing held yet: settled) after an exchange's head was authenticated. */
const closeDuringExchange = async () => {
  const { bearer, sessionId } = await world.open()
  const before = world.host().tokens.length
  const exchange = splitRequest(world.service().listenerUrl, "/acme/widgets.git/git-upload-pack", bearer)
  // The listener authenticates on the request head; give it that time before the close.
  await new Promise((resolve) => setTimeout(resolve, 500))
  const closed = await socketRequest(world.socketPath(), "POST", `/v1/sessions/${sessionId}/close`)
  expect([closed.status, closed.body.data]).toMatchObject([200, { state: "CLOSED", cleanup: { tokens: "settled" } }])
  return { sessionId, exchange, minted: () => world.host().tokens.slice(before) }
}

describe("closing a session while an exchange is under way", () => {
  it("the exchange is refused with 401 once its body arrives, and no live token is left", async () => {
    const { sessionId, exchange, minted } = await closeDuringExchange()
    const answer = await exchange.finish()
    expect(answer.status).toBe(401)
    expect(minted().filter((t) => !t.revoked)).toEqual([])
    expect((await status(sessionId)).body.data).toMatchObject({ state: "CLOSED", cleanup: { tokens: "settled" } })
  })

  it("a token minted meanwhile whose revocation fails puts the settled cleanup back to pending", async () => {
    const { sessionId, exchange, minted } = await closeDuringExchange()
    world.host().failRevocations(500)
    try {
      const answer = await exchange.finish()
      expect(answer.status).toBe(401)
    } finally {
      world.host().failRevocations(undefined)
    }
    expect(minted().map((t) => t.revoked)).toEqual([false])
    expect((await status(sessionId)).body.data).toMatchObject({ state: "CLOSED", cleanup: { tokens: "pending" } })
  })
})
