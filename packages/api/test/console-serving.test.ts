/**
 * The console's serving (DESIGN §16), over HTTP without a browser: the redirect, index.html for
 * console pages under the strict CSP, hashed assets cached for good, every other path under
 * /console/ a 404 in the envelope, only GET and HEAD, and a 503 that says so when the console is
 * not built. A small build is written to a temporary directory, so this needs no `vite build`.
 */
import { describe, expect, layer } from "@effect/vitest"
import { CONTENT_SECURITY_POLICY } from "@svc/api"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { unavailableCompute } from "../../../testing/drivers.js"
import { call, REQUEST_ID, TestServer } from "../../../testing/server.js"
import { consoleServerLayer } from "./support/consoleServer.js"

const INDEX = `<!doctype html><html><head><script type="module" src="/console/assets/index-AbCd1234.js"></script></head><body><div id="root"></div></body></html>`
const SCRIPT = `document.getElementById("root").textContent = "hello"`

const built = fs.mkdtempSync(path.join(os.tmpdir(), "svc-console-dist-"))
fs.mkdirSync(path.join(built, "assets"))
fs.writeFileSync(path.join(built, "index.html"), INDEX)
fs.writeFileSync(path.join(built, "assets", "index-AbCd1234.js"), SCRIPT)
fs.writeFileSync(path.join(built, "favicon.svg"), "<svg xmlns='http://www.w3.org/2000/svg'/>")
// Outside the build: must never be reachable through /console/.
fs.writeFileSync(path.join(built, "..", `${path.basename(built)}-secret.txt`), "outside")

const HTML_HEADERS = {
  "content-type": "text/html; charset=utf-8",
  "content-security-policy": CONTENT_SECURITY_POLICY,
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "cache-control": "no-store"
}

const headersOf = (response: Response, names: ReadonlyArray<string>) =>
  Object.fromEntries(names.map((name) => [name, response.headers.get(name)]))

const expectEnvelope = (result: Awaited<ReturnType<typeof call>>, status: number, code: string) => {
  expect(result.status).toBe(status)
  expect(result.body.error.code).toBe(code)
  expect(result.body.meta.requestId).toMatch(REQUEST_ID)
  expect(result.headers.get("x-request-id")).toBe(result.body.meta.requestId)
}

describe("the console, built", () => {
  layer(consoleServerLayer(unavailableCompute, built), { timeout: 120_000 })((it) => {
    it.effect("the policy is the strict one DESIGN §16 names", () =>
      Effect.sync(() => {
        expect(CONTENT_SECURITY_POLICY).toBe(
          "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'self'; object-src 'none'; frame-ancestors 'none'"
        )
      }))

    it.effect("/console redirects to /console/, keeping the query", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const plain = yield* Effect.promise(() => fetch(`${baseUrl}/console`, { redirect: "manual" }))
        expect([plain.status, plain.headers.get("location")]).toEqual([301, "/console/"])
        const query = yield* Effect.promise(() => fetch(`${baseUrl}/console?error=sign_in_failed`, { redirect: "manual" }))
        expect([query.status, query.headers.get("location")]).toEqual([301, "/console/?error=sign_in_failed"])
      }))

    it.effect("console pages are index.html under the CSP, never cached", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        for (const page of ["/console/", "/console/sign-in", "/console/namespaces", "/console/ns/ns_x/agents", "/console/ns/ns_x/agents/agt_y", "/console/?next=%2Fnamespaces"]) {
          const response = yield* Effect.promise(() => fetch(`${baseUrl}${page}`))
          expect({ page, status: response.status, headers: headersOf(response, Object.keys(HTML_HEADERS)) })
            .toEqual({ page, status: 200, headers: HTML_HEADERS })
          expect(yield* Effect.promise(() => response.text())).toBe(INDEX)
        }
      }))

    it.effect("hashed assets are cached for good; other files revalidate; both nosniff", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const script = yield* Effect.promise(() => fetch(`${baseUrl}/console/assets/index-AbCd1234.js`))
        expect([script.status, yield* Effect.promise(() => script.text())]).toEqual([200, SCRIPT])
        expect(headersOf(script, ["content-type", "cache-control", "x-content-type-options"])).toEqual({
          "content-type": "text/javascript; charset=utf-8",
          "cache-control": "public, max-age=31536000, immutable",
          "x-content-type-options": "nosniff"
        })
        const icon = yield* Effect.promise(() => fetch(`${baseUrl}/console/favicon.svg`))
        expect([icon.status, ...Object.values(headersOf(icon, ["content-type", "cache-control", "x-content-type-options"]))])
          .toEqual([200, "image/svg+xml", "no-cache", "nosniff"])
        const settings = yield* Effect.promise(() => fetch(`${baseUrl}/console/settings.json`))
        expect([settings.status, yield* Effect.promise(() => settings.json())]).toEqual([200, { nativeAdmin: null }])
      }))

    it.effect("HEAD answers the headers and no body", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const head = yield* Effect.promise(() => fetch(`${baseUrl}/console/namespaces`, { method: "HEAD" }))
        expect([head.status, head.headers.get("content-length"), head.headers.get("content-security-policy")])
          .toEqual([200, String(Buffer.byteLength(INDEX)), CONTENT_SECURITY_POLICY])
        expect(yield* Effect.promise(() => head.text())).toBe("")
      }))

    it.effect("unknown files and pages under /console/ are a 404 in the envelope, never index.html", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        for (const missing of [
          "/console/assets/index-Missing1.js",
          "/console/assets/index-AbCd1234.js.map",
          "/console/index.html",
          "/console/unknown-page",
          "/console/ns/ns_x/agents.js",
          `/console/..%2F${path.basename(built)}-secret.txt`,
          "/console/%2e%2e/package.json"
        ]) {
          const result = yield* Effect.promise(() => call(`${baseUrl}${missing}`))
          expectEnvelope(result, 404, "NOT_FOUND")
        }
      }))

    it.effect("only GET and HEAD: other methods are a 405 in the envelope", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const result = yield* Effect.promise(() => call(`${baseUrl}/console/`, { method: "POST", body: "{}", headers: { "content-type": "application/json" } }))
        expectEnvelope(result, 405, "METHOD_NOT_ALLOWED")
      }))

    it.effect("the API around it is unchanged", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        expect((yield* Effect.promise(() => call(`${baseUrl}/healthz`))).status).toBe(200)
        expectEnvelope(yield* Effect.promise(() => call(`${baseUrl}/namespaces`)), 401, "UNAUTHENTICATED")
        expectEnvelope(yield* Effect.promise(() => call(`${baseUrl}/consoles`)), 404, "NOT_FOUND")
      }))
  })
})

describe("the console, not built", () => {
  layer(consoleServerLayer(unavailableCompute, path.join(built, "not-there")), { timeout: 120_000 })((it) => {
    it.effect("/console/ and its pages answer 503 with a clear message; the API still serves", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        for (const page of ["/console/", "/console/namespaces", "/console/assets/index-AbCd1234.js"]) {
          const result = yield* Effect.promise(() => call(`${baseUrl}${page}`))
          expectEnvelope(result, 503, "DEPENDENCY_UNAVAILABLE")
          expect(result.body.error.message).toBe("The console is not built on this server; run `npm run build`.")
        }
        const redirect = yield* Effect.promise(() => fetch(`${baseUrl}/console`, { redirect: "manual" }))
        expect([redirect.status, redirect.headers.get("location")]).toEqual([301, "/console/"])
        expect((yield* Effect.promise(() => call(`${baseUrl}/healthz`))).status).toBe(200)
      }))
  })
})
