import { describe, expect, layer } from "@effect/vitest"
import { SvcApi } from "@svc/api"
import { documentOf } from "../../../testing/openapiDoc.js"
import { Ajv2020 } from "ajv/dist/2020.js"
import { Effect, Layer } from "effect"
import { createRequire } from "node:module"
import { createAccount } from "../../../testing/identity.js"
import { LogCapture, TestServer } from "../../../testing/server.js"
import {
  accountsTestLayer,
  cookieHeader,
  type Result,
  seedAdministrator,
  send,
  signIn
} from "./support/accountsServer.js"

// What the accounts and sessions endpoints send matches what the OpenAPI document says.
const doc = documentOf(SvcApi)
const ajv = new Ajv2020({ strict: false, allErrors: true })
const addFormats = createRequire(import.meta.url)("ajv-formats") as (ajv: Ajv2020) => void
addFormats(ajv)
// Other groups' documents may carry `$id`s that repeat; they are irrelevant to these paths.
const withoutIds = (node: unknown): unknown =>
  Array.isArray(node)
    ? node.map(withoutIds)
    : typeof node === "object" && node !== null
    ? Object.fromEntries(Object.entries(node).filter(([key]) => key !== "$id").map(([key, value]) => [key, withoutIds(value)]))
    : node
ajv.addSchema({ ...(withoutIds(doc) as object), $id: "openapi" })

const matchesDocument = (path: string, method: string, result: Result) => {
  const response = doc.paths[path]?.[method]?.responses?.[String(result.status)]
  expect(response, `${method} ${path} documents ${result.status}`).toBeDefined()
  const pointer = ["paths", path, method, "responses", String(result.status), "content", "application/json", "schema"]
    .map((segment) => segment.replace(/~/g, "~0").replace(/\//g, "~1"))
    .join("/")
  const validate = ajv.compile({ $ref: `openapi#/${pointer}` })
  validate(result.body)
  expect(validate.errors ?? [], JSON.stringify(result.body)).toEqual([])
}

const PASSWORD = "a long enough password"

describe("accounts and sessions responses against the OpenAPI document", () => {
  // Real time: one throttled sign-in waits a second.
  layer(accountsTestLayer().pipe(Layer.provideMerge(LogCapture.layer)), { timeout: 120_000, excludeTestServices: true })((it) => {
    it.effect("sign-in 200/400/401/403/429, session 200 (null and identity)/401, sign-out 200, providers 200", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const signInPath = "/api/auth/sign-in/email"
        yield* createAccount("doc@example.test", { password: PASSWORD })
        const ok = yield* signIn(baseUrl, "doc@example.test", PASSWORD)
        expect(ok.status).toBe(200)
        matchesDocument(signInPath, "post", ok)
        matchesDocument(signInPath, "post", yield* send(baseUrl, "POST", signInPath, {}, { email: "x" }))
        matchesDocument(signInPath, "post", yield* signIn(baseUrl, "doc@example.test", PASSWORD, { origin: "https://evil.example" }))
        for (let i = 0; i < 10; i++) {
          matchesDocument(signInPath, "post", yield* signIn(baseUrl, "doc@example.test", "wrong password here"))
        }
        const throttled = yield* signIn(baseUrl, "doc@example.test", "wrong password here")
        expect(throttled.status).toBe(429)
        matchesDocument(signInPath, "post", throttled)
        expect(doc.paths[signInPath].post.responses["429"]?.description).toMatch(/UNAUTHENTICATED|sign-ins/)
        expect(doc.paths[signInPath].post.responses["429"]?.headers?.["Retry-After"]?.schema).toEqual({
          type: "integer",
          minimum: 1,
          maximum: 60
        })

        const token = /svc\.session_token=([^;]+)/.exec(ok.headers.get("set-cookie")!)![1]!
        matchesDocument("/api/auth/session", "get", yield* send(baseUrl, "GET", "/api/auth/session"))
        matchesDocument("/api/auth/session", "get", yield* send(baseUrl, "GET", "/api/auth/session", cookieHeader(token)))
        matchesDocument("/api/auth/session", "get", yield* send(baseUrl, "GET", "/api/auth/session", cookieHeader("forged")))
        matchesDocument("/api/auth/providers", "get", yield* send(baseUrl, "GET", "/api/auth/providers"))
        const out = yield* send(baseUrl, "POST", "/api/auth/sign-out", { ...cookieHeader(token), origin: "http://127.0.0.1:8080" })
        expect(out.status).toBe(200)
        matchesDocument("/api/auth/sign-out", "post", out)
      }))

    it.effect("accounts and recovery: 201, 200, 404, 409 as documented", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdministrator("docadmin@example.test")
        const created = yield* send(baseUrl, "POST", "/api/auth/accounts", admin.headers, {
          email: "docuser@example.test",
          password: PASSWORD
        })
        expect(created.status).toBe(201)
        matchesDocument("/api/auth/accounts", "post", created)
        matchesDocument("/api/auth/accounts", "post", yield* send(baseUrl, "POST", "/api/auth/accounts", admin.headers, {
          email: "docuser@example.test",
          password: PASSWORD
        }))
        const userId = created.body.data.id as string
        const read = yield* send(baseUrl, "GET", `/api/auth/accounts/${userId}`, admin.headers)
        matchesDocument("/api/auth/accounts/{userId}", "get", read)
        matchesDocument("/api/auth/accounts/{userId}", "get", yield* send(baseUrl, "GET", "/api/auth/accounts/usr_x", admin.headers))
        const disable = (version: number) =>
          send(baseUrl, "POST", `/api/auth/accounts/${userId}/disable`, admin.headers, { expectedVersion: version })
        matchesDocument("/api/auth/accounts/{userId}/disable", "post", yield* disable(1))
        matchesDocument("/api/auth/accounts/{userId}/disable", "post", yield* disable(1))
        matchesDocument(
          "/api/auth/accounts/{userId}/enrol",
          "post",
          yield* send(baseUrl, "POST", `/api/auth/accounts/${userId}/enrol`, admin.headers)
        )
        matchesDocument("/api/auth/recovery", "get", yield* send(baseUrl, "GET", "/api/auth/recovery", admin.headers))
        const moved = yield* send(baseUrl, "POST", "/api/auth/recovery", admin.headers, {
          expectedCurrentUserId: admin.account.userId,
          expectedVersion: 1,
          userId: admin.account.userId
        })
        expect(moved.status).toBe(200)
        matchesDocument("/api/auth/recovery", "post", moved)
        matchesDocument("/api/auth/recovery", "get", yield* send(baseUrl, "GET", "/api/auth/recovery", admin.headers))
      }))
  })
})
