/**
 * `@svc/core/api` and `@svc/core/client` in a real browser (DESIGN §10, §16): a tiny consumer is
 * bundled by esbuild for `platform: "browser"` with no Node polyfills, served on the API's own
 * origin (Playwright answers `/__consumer/*` there), and run in Debian's chromium. It signs in
 * with the browser's cookie jar and Origin, and lists Namespaces through the typed client.
 */
import { describe, expect, it } from "@effect/vitest"
import { FetchHttpClient } from "@effect/platform"
import { Credentials, make } from "@svc/core/client"
import { Effect } from "effect"
import * as esbuild from "esbuild"
import * as fs from "node:fs"
import * as path from "node:path"
import { chromium } from "playwright-core"
import { TestServer } from "../../../testing/server.js"
import { CHROMIUM, CHROMIUM_ARGS } from "./support/browser.js"
import { clientServerLayer, DEV_ADMIN } from "./support/clientServer.js"

const screenshots = path.join(import.meta.dirname, "__screenshots__")

const PAGE = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>svc consumer</title>
<style>body { font: 16px sans-serif; margin: 2rem } #result { padding: 1rem; border: 1px solid #888 }</style>
<script type="module" src="/__consumer/consumer.js"></script></head>
<body><h1>Namespaces through @svc/core/client</h1><p id="result" data-state="pending">loading…</p></body>
</html>`

/** The consumer for a browser; esbuild fails the build on any `node:*` import it cannot resolve. */
const bundle = Effect.promise(() =>
  esbuild.build({
    entryPoints: [path.join(import.meta.dirname, "browser", "consumer.ts")],
    bundle: true,
    platform: "browser",
    format: "esm",
    minify: true,
    write: false,
    logLevel: "silent"
  })
)

describe("the typed client in a browser", () => {
  it.layer(clientServerLayer, { timeout: 120_000 })((it) => {
    it.effect("a bundle for the browser signs in and lists Namespaces on the API's origin", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const built = yield* bundle
        expect(built.errors).toEqual([])
        const [output] = built.outputFiles
        const code = output!.text
        expect(code).not.toMatch(/require\("node:|from ?"node:/)
        console.log(`browser bundle: ${code.length} bytes minified`)
        // The guard is real: the same build refuses a `node:*` import instead of polyfilling it.
        const refused = yield* Effect.promise(() =>
          esbuild.build({ stdin: { contents: `import "node:fs"` }, bundle: true, platform: "browser", write: false, logLevel: "silent" })
            .then(() => "built", (error: Error) => error.message)
        )
        expect(refused).toMatch(/Could not resolve "node:fs"/)

        // A second Namespace, created from Node with the same client (cookie jar), to be listed.
        const node = yield* make({ baseUrl, credentials: Credentials.cookieJar() }).pipe(Effect.provide(FetchHttpClient.layer))
        yield* node.authSessions.signInEmail({ payload: DEV_ADMIN })
        yield* node.namespaces.create({ payload: { name: "seen-in-the-browser" } })

        const browser = yield* Effect.acquireRelease(
          Effect.promise(() => chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS })),
          (browser) => Effect.promise(() => browser.close())
        )
        const page = yield* Effect.promise(() => browser.newPage())
        const errors: Array<string> = []
        page.on("pageerror", (error) => errors.push(error.message))
        yield* Effect.promise(() =>
          page.route(`${baseUrl}/__consumer/**`, (route) => {
            const file = new URL(route.request().url()).pathname
            return file === "/__consumer/consumer.js"
              ? route.fulfill({ status: 200, contentType: "text/javascript", body: code })
              : route.fulfill({ status: 200, contentType: "text/html", body: PAGE })
          })
        )
        const credentials = encodeURIComponent(`${DEV_ADMIN.email}\n${DEV_ADMIN.password}`)
        yield* Effect.promise(() => page.goto(`${baseUrl}/__consumer/index.html#${credentials}`))
        yield* Effect.promise(() => page.waitForSelector("#result:not([data-state=pending])", { timeout: 30_000 }))
        const state = yield* Effect.promise(() => page.getAttribute("#result", "data-state"))
        const text = yield* Effect.promise(() => page.textContent("#result"))
        fs.mkdirSync(screenshots, { recursive: true })
        yield* Effect.promise(() => page.screenshot({ path: path.join(screenshots, "browser-client.png") }))

        expect(errors).toEqual([])
        expect({ state, text }).toEqual({ state: "done", text: "default, seen-in-the-browser" })
        // The session lives in the browser's jar: an HttpOnly cookie the page could not read.
        const cookies = yield* Effect.promise(() => page.context().cookies(baseUrl))
        expect(cookies.map((cookie) => [cookie.name, cookie.httpOnly])).toEqual([["svc.session_token", true]])
      }).pipe(Effect.scoped), 120_000)
  })
})
