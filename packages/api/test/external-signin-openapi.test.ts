/**
 * The OpenAPI document tells the truth about external sign-in: what `start` and `result` send
 * validates against it, the callbacks document their 302, and (redocly's
 * operation-2xx-response being off for those callbacks) every other operation has a 2XX.
 */
import { describe, expect, it } from "@effect/vitest"
import { SvcApi } from "@svc/api"
import { documentOf } from "../../../testing/openapiDoc.js"
import { Ajv2020 } from "ajv/dist/2020.js"
import { Effect } from "effect"
import { createRequire } from "node:module"
import { TestServer } from "../../../testing/server.js"
import { enrolled, externalSignInApp } from "./support/externalSignInServer.js"
import { MockOAuthProvider } from "./support/oauthProvider.js"
import { CookieJar, result, signIn, start } from "./support/signInFlow.js"

const doc = documentOf(SvcApi)
const ajv = new Ajv2020({ strict: false, allErrors: true })
;(createRequire(import.meta.url)("ajv-formats") as (ajv: Ajv2020) => void)(ajv)
const withoutIds = (node: unknown): unknown =>
  Array.isArray(node)
    ? node.map(withoutIds)
    : typeof node === "object" && node !== null
    ? Object.fromEntries(Object.entries(node).filter(([key]) => key !== "$id").map(([key, value]) => [key, withoutIds(value)]))
    : node
ajv.addSchema({ ...(withoutIds(doc) as object), $id: "openapi" })

const matchesDocument = (path: string, method: string, response: { status: number; body: unknown }) => {
  expect(doc.paths[path]?.[method]?.responses?.[String(response.status)], `${method} ${path} documents ${response.status}`)
    .toBeDefined()
  const pointer = ["paths", path, method, "responses", String(response.status), "content", "application/json", "schema"]
    .map((segment) => segment.replace(/~/g, "~0").replace(/\//g, "~1"))
    .join("/")
  const validate = ajv.compile({ $ref: `openapi#/${pointer}` })
  validate(response.body)
  expect(validate.errors ?? [], JSON.stringify(response.body)).toEqual([])
}

const CALLBACKS = ["/api/auth/providers/codehost/callback", "/api/auth/providers/idprovider/callback"]

describe("external sign-in in the OpenAPI document", () => {
  it("documents the callbacks' 302, and a 2XX for every other operation", () => {
    for (const path of CALLBACKS) {
      expect(Object.keys(doc.paths[path].get.responses).filter((status) => /^[23]/.test(status))).toEqual(["302"])
    }
    const without2xx: Array<string> = []
    for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, { responses?: object }>>)) {
      for (const [method, operation] of Object.entries(item)) {
        if (operation.responses === undefined || CALLBACKS.includes(path)) continue
        if (!Object.keys(operation.responses).some((status) => /^2/.test(status))) without2xx.push(`${method} ${path}`)
      }
    }
    expect(without2xx).toEqual([])
  })

  it.layer(externalSignInApp, { timeout: 60_000 })((it) => {
    it.effect("start and result answers validate against the document", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const mock = yield* MockOAuthProvider
        yield* enrolled("doc@example.com", "idprovider", "doc-subject")
        mock.as("doc-subject")
        for (const provider of ["codehost", "idprovider"] as const) {
          const startPath = `/api/auth/providers/${provider}/start`
          const resultPath = `/api/auth/providers/${provider}/result`
          matchesDocument(startPath, "post", yield* start(baseUrl, provider, new CookieJar()))
          matchesDocument(startPath, "post", yield* start(baseUrl, provider, new CookieJar(), {}))
          matchesDocument(resultPath, "post", yield* result(baseUrl, provider, "a".repeat(43), new CookieJar()))
          matchesDocument(resultPath, "post", yield* result(baseUrl, provider, "short", new CookieJar()))
          matchesDocument(resultPath, "post", yield* result(baseUrl, provider, "a".repeat(43), new CookieJar(), {}))
        }
        const flow = yield* signIn(baseUrl, "idprovider")
        const redeemed = yield* result(baseUrl, "idprovider", flow.attemptId, flow.jar)
        expect(redeemed.status).toBe(200)
        matchesDocument("/api/auth/providers/idprovider/result", "post", redeemed)
      }))
  })
})
