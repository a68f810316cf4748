/**
 * SPEC 9: the control interface advertises `durableAdmissionVersion` 1, and new repository
 * attempts are refused when a broker advertises an older version or none. A loopback broker on
 * a Unix socket answers `GET /v1/capabilities` as each case needs.
 */
import { ControlUnavailable, makeCodehostRepoDriver } from "@svc/core/drivers/repo"
import { Effect, Either } from "effect"
import * as fs from "node:fs"
import * as http from "node:http"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { sampleRegistry } from "../../../testing/credentialService.js"

const socketPath = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "svc-admission-")), "control.sock")
let answer: { readonly status: number; readonly body: string } = { status: 200, body: "" }
const asked: Array<string> = []
const broker = http.createServer((request, response) => {
  asked.push(`${request.method} ${request.url}`)
  response.writeHead(answer.status, { "content-type": "application/json" })
  response.end(answer.body)
})

beforeAll(() => new Promise<void>((resolve) => broker.listen(socketPath, resolve)))
afterAll(() => new Promise<void>((resolve) => broker.close(() => resolve())))

const driver = makeCodehostRepoDriver({ id: "codehost", controlSocket: socketPath, sessionDurationSeconds: 900 }, sampleRegistry())

const admissionWith = async (status: number, body: unknown) => {
  answer = { status, body: body === undefined ? "" : JSON.stringify(body) }
  return Effect.runPromise(Effect.either(driver.checkAdmissionReady))
}

const refused = new ControlUnavailable({ reason: "the credential service does not offer durable admission" })

describe("durable admission version (SPEC 9)", () => {
  it("version 1 (or later) admits new attempts", async () => {
    expect(await admissionWith(200, { data: { durableAdmissionVersion: 1 } })).toEqual(Either.right(undefined))
    expect(await admissionWith(200, { data: { durableAdmissionVersion: 2 } })).toEqual(Either.right(undefined))
    expect(asked.at(-1)).toBe("GET /v1/capabilities")
  })

  it("an older version refuses them", async () => {
    expect(await admissionWith(200, { data: { durableAdmissionVersion: 0 } })).toEqual(Either.left(refused))
  })

  it("no version refuses them: absent, not a number, no data, no body, or not a 200", async () => {
    expect(await admissionWith(200, { data: {} })).toEqual(Either.left(refused))
    expect(await admissionWith(200, { data: { durableAdmissionVersion: "1" } })).toEqual(Either.left(refused))
    expect(await admissionWith(200, {})).toEqual(Either.left(refused))
    expect(await admissionWith(200, undefined)).toEqual(Either.left(refused))
    expect(await admissionWith(404, { error: { code: "NOT_FOUND", message: "no such path" } })).toEqual(Either.left(refused))
  })
})
