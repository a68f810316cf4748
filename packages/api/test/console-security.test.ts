/**
 * The console's security in a real browser against the real service (DESIGN §16, SPEC 5.2-5.3):
 * user strings render as text under the strict CSP with no violation; the session cookie is out
 * of the page's reach; switching Namespace never shows the previous one's data; sign-out drops
 * the cache; a read-only user is offered no write and sends none; a 401 anywhere leads to
 * sign-in. No gateway here: live Agent operations are not needed.
 */
import { beforeAll, describe, expect, layer } from "@effect/vitest"
import { CONTENT_SECURITY_POLICY } from "@svc/api"
import { BuiltinRoles } from "@svc/core/iam"
import { Effect } from "effect"
import { unavailableCompute } from "../../../testing/drivers.js"
import { bindInstallationAdmin, bindRole, createAccount, createAgentRow, createNamespaceRow, PASSWORD } from "../../../testing/identity.js"
import { TestServer } from "../../../testing/server.js"
import { launchBrowser, signIn, watchedPage } from "./support/browser.js"
import { consoleServerLayer } from "./support/consoleServer.js"
import { apiAs, requireBuiltConsole } from "./support/consolePages.js"

const XSS = "<img src=x onerror=alert(1)>"

beforeAll(() => requireBuiltConsole())

/**
 * Counts, in the page, the renders after `armed` whose text contains `needle`, on a page whose
 * path contains `where` (a string script: this file is type-checked without the DOM library).
 */
/**
 * Counts the previous Namespace's rows rendered as part of the `ns` Namespace's page: a link
 * into `ns` whose text is `needle`. (Between the URL change and React's next commit the old page
 * is still in the DOM for a moment, with links into the old Namespace: that is not a leak.)
 */
const watchRowsUnder = (needle: string, ns: string) => `
  window.__seen = 0;
  window.__armed = false;
  new MutationObserver(() => {
    if (!window.__armed) return;
    const links = document.querySelectorAll(${JSON.stringify(`a[href*="/ns/${ns}/"]`)});
    if ([...links].some((a) => a.textContent.includes(${JSON.stringify(needle)}))) window.__seen++;
  }).observe(document.body, { childList: true, subtree: true, characterData: true });`

const watchText = (needle: string, where = "/console/") => `
  window.__seen = 0;
  window.__armed = false;
  new MutationObserver(() => {
    if (window.__armed && location.pathname.includes(${JSON.stringify(where)}) && document.body.textContent.includes(${JSON.stringify(needle)})) window.__seen++;
  }).observe(document.body, { childList: true, subtree: true, characterData: true });`

describe("the console's security", () => {
  layer(consoleServerLayer(unavailableCompute), { timeout: 300_000 })((it) => {
    it.effect("strings as text, CSP, cookie, Namespace switching, sign-out, a read-only user, session expiry", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* createAccount("console-admin@example.com")
        yield* bindInstallationAdmin(admin.principalId)
        const viewer = yield* createAccount("console-viewer@example.com")
        const nsA = yield* createNamespaceRow("alpha-ns")
        const nsB = yield* createNamespaceRow("beta-ns")
        const nsX = yield* createNamespaceRow(XSS)
        yield* bindRole(viewer.principalId, BuiltinRoles.namespaceViewer.id, { kind: "namespace", id: nsA })
        const xssAgent = yield* createAgentRow(nsA, XSS)
        const alpha = yield* createAgentRow(nsA, "alpha-only")
        yield* createAgentRow(nsB, "beta-only")

        const browser = yield* launchBrowser
        const w = yield* watchedPage(browser)
        const { page } = w
        const step = (name: string, run: () => Promise<unknown>) => Effect.promise(() => run().catch(async (error: Error) => {
          throw new Error(`${name}: ${error.message} (at ${page.url()}: ${(await page.textContent("body").catch(() => ""))?.slice(0, 300)})`)
        }))

        // The document carries the strict policy; the session cookie is HttpOnly, not in document.cookie.
        const documentHeaders = yield* step("open", async () => (await page.goto(`${baseUrl}/console/sign-in`))!.allHeaders()) as Effect.Effect<Record<string, string>>
        expect([documentHeaders["content-security-policy"], documentHeaders["x-content-type-options"], documentHeaders["cache-control"]])
          .toEqual([CONTENT_SECURITY_POLICY, "nosniff", "no-store"])
        yield* signIn(page, baseUrl, "console-admin@example.com", PASSWORD)
        const cookies = yield* Effect.promise(() => page.context().cookies(baseUrl))
        expect(cookies.map((c) => [c.name, c.httpOnly])).toEqual([["svc.session_token", true]])
        expect(yield* Effect.promise(() => page.evaluate("document.cookie"))).toBe("")

        // A Secret named like markup, through the API as the admin (the browser's session).
        const secret = yield* apiAs(page, baseUrl, "POST", `/namespaces/${nsA}/secrets`, { name: XSS, value: "v" })
        expect(secret.status).toBe(201)

        // Markup in names is text: in the Namespace list, the switcher, the Agent list, the detail, the Secret picker.
        yield* step("namespaces", () => page.locator(`tr[data-namespace='${nsX}'] a`, { hasText: XSS }).waitFor())
        expect(yield* step("switcher", () => page.locator(`select[aria-label=Namespace] option[value='${nsX}']`).textContent())).toBe(XSS)
        yield* step("agents", async () => {
          await page.goto(`${baseUrl}/console/ns/${nsA}/agents`)
          await page.locator(`tr[data-agent='${xssAgent.id}'] a`, { hasText: XSS }).waitFor()
        })
        yield* step("detail", async () => {
          await page.locator(`tr[data-agent='${xssAgent.id}'] a`).click()
          await page.getByRole("heading", { name: XSS, exact: true }).waitFor()
        })
        yield* step("secret picker", async () => {
          await page.goto(`${baseUrl}/console/ns/${nsA}/agents/new`)
          await page.locator("select[name=harness-method]").selectOption("api_key")
          await page.locator("select[name=secret] option", { hasText: XSS }).waitFor({ state: "attached" })
        })
        expect(yield* step("no img", () => page.locator("img").count())).toBe(0)
        expect(w.dialogs).toEqual([])

        // Switching Namespace: the previous Namespace's Agents never appear under the new one.
        yield* step("alpha", async () => {
          await page.goto(`${baseUrl}/console/ns/${nsA}/agents`)
          await page.locator(`tr[data-agent='${alpha.id}']`).waitFor()
          await page.evaluate(watchRowsUnder("alpha-only", nsB))
          await page.evaluate("window.__armed = true")
          await page.getByLabel("Namespace").selectOption(nsB)
          await page.waitForURL(`${baseUrl}/console/ns/${nsB}/agents`)
          await page.getByRole("link", { name: "beta-only" }).waitFor()
        })
        expect(yield* step("seen", () => page.evaluate("window.__seen"))).toBe(0)

        // Sign-out: the cache goes with the session; going back shows sign-in, never the old data.
        yield* step("sign out", async () => {
          await page.evaluate(watchText("beta-only"))
          await page.getByRole("button", { name: "Sign out" }).click()
          await page.waitForURL(`${baseUrl}/console/sign-in`)
          await page.evaluate("window.__armed = true")
          await page.goBack()
          await page.waitForURL(/\/console\/sign-in\?next=/)
        })
        expect(yield* step("seen after sign-out", () => page.evaluate("window.__seen"))).toBe(0)

        // A read-only user in the same tab: sees only what it may read, is offered no write, sends none.
        const from = w.requests.length
        yield* step("viewer", async () => {
          await page.goto(`${baseUrl}/console/sign-in`)
          await page.evaluate(watchText("beta-ns"))
          await page.evaluate("window.__armed = true")
          await page.getByLabel("Email").fill("console-viewer@example.com")
          await page.getByLabel("Password").fill(PASSWORD)
          await page.getByRole("button", { name: "Sign in" }).click()
          await page.waitForURL(`${baseUrl}/console/namespaces`)
          await page.locator(`tr[data-namespace='${nsA}']`).waitFor()
        })
        // Nothing of the administrator's session was rendered for the viewer.
        expect(yield* step("admin's data", () => page.evaluate("window.__seen"))).toBe(0)
        const viewerNamespaces = yield* step("viewer list", () => page.locator("tr[data-namespace]").evaluateAll((rows) => rows.map((r) => r.getAttribute("data-namespace"))))
        expect(viewerNamespaces).toEqual([nsA])
        yield* step("viewer agents", async () => {
          await page.getByRole("link", { name: "alpha-ns" }).click()
          await page.locator(`tr[data-agent='${alpha.id}']`).waitFor()
        })
        yield* step("viewer detail", async () => {
          await page.getByRole("link", { name: "alpha-only" }).click()
          await page.getByRole("heading", { name: "alpha-only" }).waitFor()
          await page.getByRole("heading", { name: "Revisions" }).waitFor()
        })
        const writeControls = yield* step("controls", () => page.getByRole("button", { name: /^(Deploy|Stop|Delete|Create .*|Save .*|Run diagnostics)$/ }).count())
        expect(writeControls).toBe(0)
        yield* step("viewer form", async () => {
          await page.goto(`${baseUrl}/console/ns/${nsA}/agents/new`)
          await page.locator("[data-state=denied]").waitFor()
        })
        yield* step("viewer namespaces", async () => {
          await page.goto(`${baseUrl}/console/namespaces`)
          await page.locator(`tr[data-namespace='${nsA}']`).waitFor()
        })
        expect(yield* step("no create", () => page.getByRole("button", { name: /Create Namespace|Delete/ }).count())).toBe(0)
        expect(yield* step("no links", () => page.getByRole("link", { name: /New (Agent|Secret|Configuration)/ }).count())).toBe(0)
        const writes = w.requests.slice(from).filter((r) => !r.startsWith("GET ") && r !== "POST /api/auth/sign-in/email")
        expect(writes).toEqual([])

        // Session expiry: the session is revoked behind the page; its next read brings sign-in back.
        expect((yield* apiAs(page, baseUrl, "POST", "/api/auth/sign-out")).status).toBe(200)
        yield* step("expired", async () => {
          await page.getByRole("link", { name: "alpha-ns" }).click()
          await page.waitForURL(`${baseUrl}/console/sign-in?next=${encodeURIComponent(`/ns/${nsA}/agents`)}`)
          await page.getByRole("button", { name: "Sign in" }).waitFor()
        })

        expect(w.errors).toEqual([])
        expect(w.dialogs).toEqual([])
        expect(yield* Effect.promise(() => w.violations())).toEqual([])
        expect(w.consoleMessages.filter((m) => /Content Security Policy|Refused to/i.test(m))).toEqual([])
      }).pipe(Effect.scoped), 300_000)
  })
})
