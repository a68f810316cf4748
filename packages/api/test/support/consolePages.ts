/**
 * What the console tests share: where screenshots go, the built console (the tests serve the
 * real `vite build` output; `npm test` builds it first), and calls to the API from the signed-in
 * browser context (its cookie jar, the trusted Origin) for operator steps no console page owns.
 */
import { defaultConsoleDir } from "@svc/api"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import type { Page } from "playwright-core"

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
