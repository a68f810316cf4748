/**
 * What the console tests share: where screenshots go, the built console (the tests serve the
 * real `vite build` output; `npm test` builds it first), and calls to the API from the signed-in
 * browser context (its cookie jar, the trusted Origin) for operator steps no console page owns,
 * and the start most page tests share: an Installation administrator signed in, in a watched page.
 */
import { defaultConsoleDir } from "@svc/api"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import type { Page } from "playwright-core"
import { bindInstallationAdmin, createAccount, createNamespaceRow, PASSWORD } from "../../../../testing/identity.js"
import { TestServer } from "../../../../testing/server.js"
import { launchBrowser, signIn, watchedPage } from "./browser.js"

export const SCREENSHOTS = path.join(import.meta.dirname, "..", "..", "..", "..", "docs", "screenshots")

/** Fails the file at once, with the fix, when the console was not built. */
export const requireBuiltConsole = () => {
  if (!fs.existsSync(path.join(defaultConsoleDir(), "index.html"))) {
    throw new Error("packages/console is not built: run `npm run build` (npm test does) before the console tests")
  }
}

export const screenshot = (page: Page, name: string) =>
  Effect.promise(async () => {
    fs.mkdirSync(SCREENSHOTS, { recursive: true })
    await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`) })
  })

/** An API call with the browser's session, as the console would make it; the JSON body back. */
export const apiAs = (page: Page, baseUrl: string, method: string, apiPath: string, body?: unknown) =>
  Effect.promise(async () => {
    const response = await page.request.fetch(`${baseUrl}${apiPath}`, {
      method,
      headers: { origin: baseUrl, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      ...(body === undefined ? {} : { data: JSON.stringify(body) })
    })
    const text = await response.text()
    // Untyped on purpose, like testing/server.ts `call`: tests assert the exact shape.
    const json: any = text.length > 0 ? JSON.parse(text) : undefined
    return { status: response.status(), body: json }
  })

/** A named browser step: its failure says which step failed. */
export const stepper = (page: Page) => <A>(name: string, run: (page: Page) => Promise<A>) =>
  Effect.promise(() => run(page).catch((error: Error) => {
    throw new Error(`${name}: ${error.message}`)
  }))

/**
 * Every response body the page received from the service. Each is read when its request has
 * finished: a response still streaming when the page moves on may never finish, and waiting for
 * its body waited for ever. The reads are awaited for at most 30 s; past that the call fails
 * with the URLs still unread.
 */
export const recordResponses = (page: Page, baseUrl: string) => {
  const bodies: Array<Promise<string>> = []
  const unread = new Set<string>()
  page.on("requestfinished", (request) => {
    if (!request.url().startsWith(baseUrl)) return
    const url = `${request.method()} ${request.url()} #${bodies.length}`
    unread.add(url)
    bodies.push(
      request.response()
        .then((response) => response?.text() ?? "")
        .catch(() => "")
        .finally(() => unread.delete(url))
    )
  })
  return async () => {
    let timer: NodeJS.Timeout | undefined
    const limit = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`response bodies not read in 30 s: ${[...unread].join(", ")}`)), 30_000)
    })
    try {
      return await Promise.race([Promise.all(bodies), limit])
    } finally {
      clearTimeout(timer)
    }
  }
}

/**
 * An Installation administrator `<prefix>-admin@example.com` signed in through the console in a
 * watched page of a fresh browser, and a Namespace `<prefix>-ns`.
 */
export const signedInAdmin = (prefix: string) =>
  Effect.gen(function* () {
    const { baseUrl } = yield* TestServer
    const admin = yield* createAccount(`${prefix}-admin@example.com`)
    yield* bindInstallationAdmin(admin.principalId)
    const ns = yield* createNamespaceRow(`${prefix}-ns`)
    const browser = yield* launchBrowser
    const w = yield* watchedPage(browser)
    const responses = recordResponses(w.page, baseUrl)
    yield* signIn(w.page, baseUrl, admin.email, PASSWORD)
    return { baseUrl, admin, ns, browser, w, page: w.page, step: stepper(w.page), responses }
  })
