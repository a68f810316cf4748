/**
 * Debian's chromium driven by playwright-core (DESIGN §16: Playwright never downloads a browser
 * here), with what the console tests watch: page errors, console messages, dialogs, CSP
 * violations reported by the page itself, and every request the page makes.
 */
import { Effect } from "effect"
import { type Browser, chromium, type Page } from "playwright-core"

export const CHROMIUM = "/usr/bin/chromium"
// This machine's network is closed: without these, chromium waits on its own background traffic.
export const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync"
]

/** One browser for a test file, closed with its scope. */
export const launchBrowser = Effect.acquireRelease(
  Effect.promise(() => chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS })),
  (browser) => Effect.promise(() => browser.close())
)

export interface Watched {
  readonly page: Page
  readonly errors: Array<string>
  readonly consoleMessages: Array<string>
  readonly dialogs: Array<string>
  /** `METHOD path` of every request the page made, in order. */
  readonly requests: Array<string>
  /** CSP violations the page reported (`securitypolicyviolation` events). */
  readonly violations: () => Promise<ReadonlyArray<string>>
}

/** A fresh context (its own cookie jar) and page, watched from the first request on. */
export const watchedPage = (browser: Browser, viewport = { width: 1280, height: 860 }) =>
  Effect.acquireRelease(
    Effect.promise(async (): Promise<Watched> => {
      const context = await browser.newContext({ viewport })
      const page = await context.newPage()
      const watched: Watched = {
        page,
        errors: [],
        consoleMessages: [],
        dialogs: [],
        requests: [],
        violations: () => page.evaluate("window.__violations ?? []") as Promise<ReadonlyArray<string>>
      }
      // Init scripts are injected by the browser, not by the page, so the CSP does not apply to them.
      // (A string: this file is type-checked without the DOM library.)
      await page.addInitScript({
        content: `window.__violations = [];
          document.addEventListener("securitypolicyviolation", (event) => window.__violations.push(event.violatedDirective + " " + event.blockedURI))`
      })
      page.on("pageerror", (error) => watched.errors.push(error.message))
      page.on("console", (message) => watched.consoleMessages.push(`${message.type()}: ${message.text()}`))
      page.on("dialog", (dialog) => {
        watched.dialogs.push(`${dialog.type()}: ${dialog.message()}`)
        // Confirmations the console asks for are accepted; anything else is recorded and dismissed.
        void (dialog.type() === "confirm" ? dialog.accept() : dialog.dismiss())
      })
      page.on("request", (request) => watched.requests.push(`${request.method()} ${new URL(request.url()).pathname}`))
      return watched
    }),
    (watched) => Effect.promise(() => watched.page.context().close())
  )

/** Signs in through the console's own form. */
export const signIn = (page: Page, baseUrl: string, email: string, password: string) =>
  Effect.promise(async () => {
    await page.goto(`${baseUrl}/console/sign-in`)
    await page.getByLabel("Email").fill(email)
    await page.getByLabel("Password").fill(password)
    await page.getByRole("button", { name: "Sign in" }).click()
    await page.waitForURL(/\/console\/namespaces$/)
  })
