/**
 * SPEC 4.8 "immediate local closure": a session closed while a client is still sending an
 * exchange's body (authenticated before the close) gets no code-host token for it. The listener
 * refuses the exchange (401), and a token minted meanwhile is revoked at once, so a closed or
 * disposed session never leaves a live token behind (SPEC 3 "Repository sessions").
 */
import * as http from "node:http"
import { describe, expect, it } from "vitest"
import { socketRequest } from "../../../testing/credentialService.js"
import { useCredentialService, WIDGETS } from "./support/service.js"

const world = useCredentialService({ codeHost: [WIDGETS] })

/** `POST target` whose body is sent in two parts: `finish` sends the rest and gives the answer. */
const splitRequest = (listenerUrl: string, target: string, bearer: string) => {
  const url = new URL(listenerUrl)
  const body = Buffer.from("0032want 0000000000000000000000000000000000000000\n00000009done\n")
  let answer: Promise<{ readonly status: number; readonly text: string }> | undefined
  const request = http.request({
    host: url.hostname,
    port: Number(url.port),
    method: "POST",
    path: target,
    agent: false,
    headers: {
      authorization: `Basic ${Buffer.from(`x-access-token:${bearer}`).toString("base64")}`,
      "content-type": "application/x-git-upload-pack-request",
      "content-length": String(body.length)
    }
  })
  answer = new Promise((resolve, reject) => {
    request.on("response", (response) => {
      const chunks: Array<Buffer> = []
      response.on("data", (chunk: Buffer) => chunks.push(chunk))
      response.on("end", () => resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") }))
    })
    request.on("error", reject)
  })
  request.write(body.subarray(0, 10))
  return {
    finish: () => {
      request.end(body.subarray(10))
      return answer!
    }
  }
}

describe("closing a session while an exchange is under way", () => {
  it("the exchange is refused with 401 once its body arrives, and no live token is left", async () => {
    const { bearer, sessionId } = await world.open()
    const before = world.host().tokens.length
    const exchange = splitRequest(world.service().listenerUrl, "/acme/widgets.git/git-upload-pack", bearer)
    // The listener authenticates on the request head; give it that time before the close.
    await new Promise((resolve) => setTimeout(resolve, 500))
    const closed = await socketRequest(world.socketPath(), "POST", `/v1/sessions/${sessionId}/close`)
    expect(closed.status).toBe(200)
    expect(closed.body.data).toMatchObject({ state: "CLOSED", cleanup: { tokens: "settled" } })

    const answer = await exchange.finish()
    expect(answer.status).toBe(401)
    expect(world.host().tokens.slice(before).filter((t) => !t.revoked)).toEqual([])
    const status = await socketRequest(world.socketPath(), "GET", `/v1/sessions/${sessionId}`)
    expect(status.body.data).toMatchObject({ state: "CLOSED", cleanup: { tokens: "settled" } })
  })
})
