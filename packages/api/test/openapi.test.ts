import { describe, expect, it } from "@effect/vitest"
import { SvcApi } from "@svc/api"
import { httpPipeline } from "@svc/core/http"
import { documentOf } from "../../../testing/openapiDoc.js"
import { Ajv2020 } from "ajv/dist/2020.js"
import { Effect, Layer } from "effect"
import { execFileSync, spawnSync } from "node:child_process"
import { createRequire } from "node:module"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { migratedDatabaseLayer } from "../../../testing/database.js"
import { call, serveForTest, TestServer } from "../../../testing/server.js"
import { ThingsGroupsLive, ThingsTestApi } from "./support/thingsApi.js"

const root = path.resolve(import.meta.dirname, "../../..")

describe("the OpenAPI document", () => {
  it("is OpenAPI 3.1.0, version 0.1.0, titled as a development API", () => {
    const doc = documentOf(SvcApi)
    expect(doc.openapi).toBe("3.1.0")
    expect(doc.info).toEqual({ title: "Agent control-plane API (development)", version: "0.1.0" })
    expect(doc.components.schemas).not.toHaveProperty("HttpApiDecodeError")
    expect(JSON.stringify(doc)).not.toContain("HttpApiDecodeError")
  })

  it("declares the credentials of SPEC 5.1: the session cookie as svc.session_token (SPEC 5.2) and x-api-key", () => {
    const doc = documentOf(SvcApi)
    expect(doc.components.securitySchemes).toEqual({
      "svc.session_token": { type: "apiKey", in: "cookie", name: "svc.session_token", description: expect.any(String) },
      serviceKey: { type: "apiKey", in: "header", name: "x-api-key", description: expect.any(String) }
    })
    const security = (path: string, method: string) => doc.paths[path]?.[method]?.security
    const either = [{ "svc.session_token": [] }, { serviceKey: [] }]
    const sessionOnly = [{ "svc.session_token": [] }]
    expect(security("/namespaces/{namespaceId}/agents", "post")).toEqual(either)
    expect(security("/api/auth/service-keys", "post")).toEqual(either)
    expect(security("/api/auth/service-keys/{keyId}", "delete")).toEqual(either)
    // A key is 401 for account management and sign-out (SPEC 5.5.4): the cookie only.
    expect(security("/api/auth/accounts", "post")).toEqual(sessionOnly)
    expect(security("/api/auth/recovery", "get")).toEqual(sessionOnly)
    expect(security("/api/auth/sign-out", "post")).toEqual(sessionOnly)
    // Session inspection answers anonymous callers too.
    expect(security("/api/auth/session", "get")).toEqual([{}, { "svc.session_token": [] }])
    for (const [path, method] of [["/api/auth/sign-in/email", "post"], ["/api/auth/providers", "get"], ["/healthz", "get"]] as const) {
      expect(security(path, method), `${method} ${path}`).toEqual([])
    }
  })

  it("passes the redocly linter (recommended rules)", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "svc-openapi-"))
    const file = path.join(dir, "openapi.json")
    try {
      execFileSync(process.execPath, [path.join(root, "scripts/openapi.mjs"), file], { cwd: root, stdio: "pipe" })
      const lint = spawnSync(
        process.execPath,
        [path.join(root, "node_modules/@redocly/cli/bin/cli.js"), "lint", "--config", path.join(root, "redocly.yaml"), file],
        { cwd: root, encoding: "utf8", env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true" } }
      )
      const output = `${lint.stdout}${lint.stderr}`
      expect(lint.status, output).toBe(0)
      expect(output).toMatch(/Your API description is valid/)
      // No rule findings: redocly prints "You have N warning(s)" when a rule warns.
      expect(output).not.toMatch(/You have \d+ warning/)
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  }, 120_000)
})

// What is sent matches what the document says, for successes and every kind of error.
const doc = documentOf(ThingsTestApi)
const ajv = new Ajv2020({ strict: false, allErrors: true })
const addFormats = createRequire(import.meta.url)("ajv-formats") as (ajv: Ajv2020) => void
addFormats(ajv)
ajv.addSchema({ ...doc, $id: "openapi" })

const validatorFor = (pathName: string, method: string, status: number) => {
  const response = doc.paths[pathName][method].responses[String(status)]
  expect(response, `${method} ${pathName} documents ${status}`).toBeDefined()
  expect(response?.content?.["application/json"]?.schema).toBeDefined()
  const pointer = ["paths", pathName, method, "responses", String(status), "content", "application/json", "schema"]
    .map((segment) => segment.replace(/~/g, "~0").replace(/\//g, "~1"))
    .join("/")
  return ajv.compile({ $ref: `openapi#/${pointer}` })
}

const app = serveForTest(httpPipeline(ThingsTestApi, ThingsGroupsLive, { development: true, maxBodyBytes: 1024 })).pipe(
  Layer.provide(migratedDatabaseLayer)
)

describe("responses against the document", () => {
  it.layer(app, { timeout: 60_000 })((it) => {
    const cases: ReadonlyArray<readonly [string, string, string, RequestInit | undefined, number]> = [
      ["/healthz", "get", "/healthz", undefined, 200],
      ["/readyz", "get", "/readyz", undefined, 200],
      ["/things", "post", "/things", { method: "POST", headers: { "content-type": "application/json" }, body: '{"name":"a"}' }, 201],
      ["/things", "post", "/things", { method: "POST", headers: { "content-type": "application/json" }, body: '{"nam":"a"}' }, 400],
      ["/things", "post", "/things", { method: "POST", headers: { "content-type": "text/plain" }, body: "a" }, 415],
      ["/things", "post", "/things", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ name: "x".repeat(2000) }) }, 413],
      ["/healthz", "get", "/healthz", { method: "DELETE" }, 405],
      ["/healthz", "get", "/nowhere", undefined, 404],
      ["/boom", "get", "/boom", undefined, 500]
    ]
    for (const [documented, method, requested, init, status] of cases) {
      it.effect(`${init?.method ?? "GET"} ${requested} -> ${status} matches the documented schema`, () =>
        Effect.gen(function* () {
          const { baseUrl } = yield* TestServer
          const result = yield* Effect.promise(() => call(`${baseUrl}${requested}`, init))
          expect(result.status).toBe(status)
          const validate = validatorFor(documented, method, status)
          const valid = validate(result.body)
          expect(validate.errors ?? [], JSON.stringify(result.body)).toEqual([])
          expect(valid).toBe(true)
          expect(doc.paths[documented][method].responses[String(status)]?.headers?.["x-request-id"]).toBeDefined()
        }))
    }
  })
})
