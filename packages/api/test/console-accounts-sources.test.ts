/**
 * The console's service-account and credential-source pages (SPEC 2.10, 2.11, 4.5, 4.6) in
 * Debian's chromium against the real service, whose Installation has a loopback Credential
 * Gateway and no ServiceAccount Driver: an administrator reaches both from the Namespace's
 * navigation, creates a native service account, sees issuance refused with the service's own
 * 503, sets an api_key reference and deletes the account; registers a credential source from a
 * Secret picked by name (a gateway refusal shown as the service's 503 first), reads its live
 * status and deletes it, and is refused (409) deleting a source an Agent binds. A person who may
 * update service accounts but not operate the Secret sees the service's 403, and a credential
 * source it may not read is "not found". No Secret value reaches the DOM or any response.
 */
import * as grpc from "@grpc/grpc-js"
import { afterAll, beforeAll, describe, expect, layer } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { RoleId } from "@svc/core/schema"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import type { Page } from "playwright-core"
import { startCredentialGateway } from "../../../testing/credentialGateway.js"
import { unavailableCompute } from "../../../testing/drivers.js"
import { bindRole, createAccount, PASSWORD } from "../../../testing/identity.js"
import { signIn, watchedPage } from "./support/browser.js"
import { consoleServerLayer } from "./support/consoleServer.js"
import { apiAs, requireBuiltConsole, screenshot, SCREENSHOTS, signedInAdmin, stepper } from "./support/consolePages.js"
import { GATEWAY_TOKEN, gatewayInstallation } from "./support/credentialGatewayWorld.js"

beforeAll(() => requireBuiltConsole())

const gateway = await startCredentialGateway({ token: GATEWAY_TOKEN })
afterAll(() => gateway.stop())

const SECRET_VALUE = `sk-console-${crypto.randomUUID()}`

/** The shared helper's screenshot, and its path for the report. */
const shot = (page: Page, name: string) => Effect.as(screenshot(page, name), path.join(SCREENSHOTS, `${name}.png`))

describe("the console's service-account and credential-source pages", () => {
  layer(consoleServerLayer(unavailableCompute, undefined, gatewayInstallation(gateway, "kubernetes")), { timeout: 300_000 })((it) => {
    it.effect("an administrator manages both; refusals show the service's message; no Secret value reaches the page", () =>
      Effect.gen(function* () {
        const { baseUrl, ns, w, page, step, responses } = yield* signedInAdmin("sa-cs")
        const secret = yield* apiAs(page, baseUrl, "POST", `/namespaces/${ns}/secrets`, { name: "vendor-key", value: SECRET_VALUE })
        expect(secret.status).toBe(201)

        // Service accounts: reached from the Namespace's navigation, empty, then created by name.
        const accountId = yield* step("create service account", async (p) => {
          await p.goto(`${baseUrl}/console/ns/${ns}/agents`)
          await p.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Service accounts" }).click()
          await p.waitForURL(`${baseUrl}/console/ns/${ns}/service-accounts`)
          await p.locator("[data-state=empty]").waitFor()
          await p.fill("input[name=service-account-name]", "deployer")
          await p.getByRole("button", { name: "Create service account" }).click()
          const row = p.locator("tr[data-service-account]")
          await row.waitFor()
          return row.getAttribute("data-service-account")
        })
        expect(accountId).toMatch(/^sa_/)
        const listed = yield* step("service account row", (p) =>
          p.locator(`tr[data-service-account='${accountId}'] td`).allInnerTexts())
        expect(listed.slice(1, 4)).toEqual(["native", "ready", "none"])
        const accountsShot = yield* shot(page, "service-accounts")

        // Issuance without a ServiceAccount Driver: the page shows the service's own 503.
        const issuePath = `/namespaces/${ns}/service-accounts/${accountId}/credentials`
        const refusedIssue = yield* apiAs(page, baseUrl, "POST", issuePath, {})
        expect([refusedIssue.status, refusedIssue.body.error.code]).toEqual([503, "DEPENDENCY_UNAVAILABLE"])
        const issueShown = yield* step("issue refused", async (p) => {
          await p.locator(`tr[data-service-account='${accountId}'] a`).click()
          await p.locator("[data-field=name]", { hasText: "deployer" }).waitFor()
          const sent = p.waitForRequest((request) => request.method() === "POST" && request.url().endsWith(issuePath))
          await p.getByRole("button", { name: "Issue credential" }).click()
          const body = (await sent).postData()
          const error = p.locator("[aria-label='Issue the provider credential'] .action-error")
          await error.waitFor()
          return { body, code: await error.getAttribute("data-code"), text: await error.textContent() }
        })
        expect(issueShown).toEqual({
          body: "{}",
          code: "DEPENDENCY_UNAVAILABLE",
          text: `DEPENDENCY_UNAVAILABLE: ${refusedIssue.body.error.message}`
        })

        // A native api_key reference by Secret name and key makes the credential ready.
        const readiness = yield* step("set reference", async (p) => {
          await p.fill("input[name=secret-ref-name]", "vendor-key")
          await p.getByRole("button", { name: "Set reference" }).click()
          await p.getByRole("status").filter({ hasText: "Set." }).waitFor()
          await p.evaluate("window.scrollTo(0, 0)")
          return p.locator("[data-field=credential]").textContent()
        })
        expect(readiness).toBe("api_key, ready")
        const account = yield* apiAs(page, baseUrl, "GET", `/namespaces/${ns}/service-accounts/${accountId}`)
        expect(account.body.data).toMatchObject({ managed: false, state: "ready", credential: { kind: "api_key", ready: true } })
        const accountShot = yield* shot(page, "service-account")
        yield* step("delete service account", async (p) => {
          await p.getByRole("button", { name: "Delete" }).click()
          await p.waitForURL(`${baseUrl}/console/ns/${ns}/service-accounts`)
          await p.locator("[data-state=empty]").waitFor()
        })
        const goneAccount = yield* apiAs(page, baseUrl, "GET", `/namespaces/${ns}/service-accounts/${accountId}`)
        expect([goneAccount.status, goneAccount.body.error.code]).toEqual([404, "NOT_FOUND"])

        // Credential sources: the form names a Secret by picking it; a gateway refusal is the service's 503.
        const sourcesPath = `/namespaces/${ns}/credential-sources`
        const sourceBody = {
          name: "vendor",
          type: "modelvendor",
          config: { base_url: "https://models.example.com" },
          secrets: { api_key: { kind: "secret", namespaceId: ns, id: secret.body.data.id } }
        }
        gateway.next("CreateProvider", { kind: "status", code: grpc.status.PERMISSION_DENIED })
        const refusedSource = yield* apiAs(page, baseUrl, "POST", sourcesPath, sourceBody)
        expect([refusedSource.status, refusedSource.body.error.code]).toEqual([503, "DEPENDENCY_UNAVAILABLE"])
        gateway.next("CreateProvider", { kind: "status", code: grpc.status.PERMISSION_DENIED })
        const sourceRefused = yield* step("credential source refused", async (p) => {
          await p.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Credential sources" }).click()
          await p.waitForURL(`${baseUrl}/console/ns/${ns}/credential-sources`)
          await p.locator("[data-state=empty]").waitFor()
          await p.fill("input[name=source-name]", "vendor")
          await p.fill("input[name=source-type]", "modelvendor")
          await p.getByRole("button", { name: "Add config field" }).click()
          await p.fill("input[name=config-field]", "base_url")
          await p.fill("input[name=config-value]", "https://models.example.com")
          await p.getByRole("button", { name: "Add secret field" }).click()
          await p.fill("input[name=secret-field]", "api_key")
          await p.selectOption("select[name=secret-value]", { label: "vendor-key" })
          const sent = p.waitForRequest((request) => request.method() === "POST" && request.url().endsWith(sourcesPath))
          await p.getByRole("button", { name: "Create credential source" }).click()
          const body = (await sent).postDataJSON()
          const error = p.locator("form[aria-label='Create a credential source'] .action-error")
          await error.waitFor()
          return { body, text: await error.textContent(), empty: await p.locator("[data-state=empty]").count() }
        })
        expect(sourceRefused).toEqual({ body: sourceBody, text: `DEPENDENCY_UNAVAILABLE: ${refusedSource.body.error.message}`, empty: 1 })
        const refusedShot = yield* shot(page, "credential-source-refused")

        const sourceId = yield* step("create credential source", async (p) => {
          await p.getByRole("button", { name: "Create credential source" }).click()
          const row = p.locator("tr[data-credential-source]")
          await row.waitFor()
          return row.getAttribute("data-credential-source")
        })
        expect(sourceId).toMatch(/^cs_/)
        const sourcesShot = yield* shot(page, "credential-sources")
        const detail = yield* step("credential source detail", async (p) => {
          await p.locator(`tr[data-credential-source='${sourceId}'] a`).click()
          await p.locator("[data-field=status] [data-status]").waitFor()
          return {
            status: await p.locator("[data-field=status] [data-status]").getAttribute("data-status"),
            config: await p.locator("[data-config-field]").allInnerTexts(),
            secrets: await p.locator("[data-secret-field]").allInnerTexts()
          }
        })
        const read = yield* apiAs(page, baseUrl, "GET", `${sourcesPath}/${sourceId}`)
        expect(read.body.data.status).toEqual({ state: "ready" })
        expect(detail).toEqual({ status: "ready", config: ["base_url https://models.example.com"], secrets: ["api_key Secret vendor-key"] })
        const sourceShot = yield* shot(page, "credential-source")
        const html = yield* step("page HTML", (p) => p.content())
        expect(html.includes(SECRET_VALUE)).toBe(false)

        yield* step("delete credential source", async (p) => {
          await p.getByRole("button", { name: "Delete" }).click()
          await p.waitForURL(`${baseUrl}/console/ns/${ns}/credential-sources`)
          await p.locator("[data-state=empty]").waitFor()
        })
        const goneSource = yield* apiAs(page, baseUrl, "GET", `${sourcesPath}/${sourceId}`)
        expect([goneSource.status, goneSource.body.error.code]).toEqual([404, "NOT_FOUND"])
        expect([...gateway.providers.keys()]).toEqual([])

        // A source an Agent binds: delete is refused with the service's 409, and the page stays.
        const configuration = yield* apiAs(page, baseUrl, "POST", `/namespaces/${ns}/configurations`, { kind: "agent", values: { agents: {} } })
        const bound = yield* apiAs(page, baseUrl, "POST", sourcesPath, { ...sourceBody, name: "bound" })
        const agent = yield* apiAs(page, baseUrl, "POST", `/namespaces/${ns}/agents`, {
          name: "bot",
          configurationId: configuration.body.data.id,
          executionMode: "dedicated",
          harnessAuth: { method: "credential_source", sourceId: bound.body.data.id }
        })
        expect([configuration.status, bound.status, agent.status]).toEqual([201, 201, 201])
        const conflict = yield* step("delete bound source", async (p) => {
          await p.goto(`${baseUrl}/console/ns/${ns}/credential-sources/${bound.body.data.id}`)
          await p.locator("[data-field=name]", { hasText: "bound" }).waitFor()
          await p.getByRole("button", { name: "Delete" }).click()
          const error = p.locator(".action-error")
          await error.waitFor()
          return { text: await error.textContent(), url: p.url(), name: await p.locator("[data-field=name]").textContent() }
        })
        expect(conflict).toEqual({
          text: `RESOURCE_CONFLICT: The credential source is bound by Agent ${agent.body.data.id}; rebind it first.`,
          url: `${baseUrl}/console/ns/${ns}/credential-sources/${bound.body.data.id}`,
          name: "bound"
        })
        const conflictShot = yield* shot(page, "credential-source-conflict")
        expect([...gateway.providers.keys()]).toEqual([bound.body.data.id])

        // Nothing the page received carried the value; the page raised no error.
        const bodies = yield* Effect.promise(responses)
        expect(bodies.filter((body) => body.includes(SECRET_VALUE))).toEqual([])
        // The bodies were read: the Secret's name, which the source form listed, is among them.
        expect(bodies.some((body) => body.includes("\"vendor-key\""))).toBe(true)
        expect(w.errors).toEqual([])
        for (const file of [accountsShot, accountShot, refusedShot, sourcesShot, sourceShot, conflictShot]) expect(fs.statSync(file).size).toBeGreaterThan(0)
      }).pipe(Effect.scoped), 300_000)

    it.effect("a service-account updater who may read but not operate the Secret sees the service's 403; a credential source it cannot read is not found", () =>
      Effect.gen(function* () {
        const { baseUrl, ns, browser, page } = yield* signedInAdmin("sa-cs-reader")
        const secret = yield* apiAs(page, baseUrl, "POST", `/namespaces/${ns}/secrets`, { name: "reader-key", value: SECRET_VALUE })
        const account = yield* apiAs(page, baseUrl, "POST", `/namespaces/${ns}/service-accounts`, { name: "seen" })
        const source = yield* apiAs(page, baseUrl, "POST", `/namespaces/${ns}/credential-sources`, {
          name: "unseen",
          type: "modelvendor",
          secrets: { api_key: { kind: "secret", namespaceId: ns, id: secret.body.data.id } }
        })
        expect([secret.status, account.status, source.status]).toEqual([201, 201, 201])
        const reader = yield* createAccount("sa-cs-reader@example.com")
        const sql = yield* SqlClient.SqlClient
        const role = RoleId.make()
        yield* sql`INSERT INTO roles (id, namespace_id, name, permissions)
          VALUES (${role}, ${ns}, 'account-updater', ${["namespace:read", "secret:read", "service_account:read", "service_account:update"]})`
        yield* bindRole(reader.principalId, role, { kind: "namespace", id: ns })

        const v = yield* watchedPage(browser)
        yield* signIn(v.page, baseUrl, reader.email, PASSWORD)
        const signedIn = v.requests.length
        const accountPath = `/namespaces/${ns}/service-accounts/${account.body.data.id}`
        const forbidden = yield* apiAs(v.page, baseUrl, "PATCH", `${accountPath}/credential`, { kind: "api_key", secretRef: { name: "reader-key", key: "value" } })
        expect([forbidden.status, forbidden.body.error.code]).toEqual([403, "FORBIDDEN"])
        const seen = yield* stepper(v.page)("updater pages", async (p) => {
          // Controls depend on the permission probe: look once it has answered and a frame has rendered.
          const probed = async (url: string) => {
            await Promise.all([p.waitForResponse((r) => new URL(r.url()).pathname === `/namespaces/${ns}/permissions`), p.goto(url)])
            await p.evaluate("new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)))")
          }
          const buttons = () => p.locator("main button").allInnerTexts()
          await probed(`${baseUrl}/console/ns/${ns}/service-accounts`)
          await p.locator(`tr[data-service-account='${account.body.data.id}']`).waitFor()
          const list = await buttons()
          await probed(`${baseUrl}/console/ns/${ns}/service-accounts/${account.body.data.id}`)
          await p.locator("[data-field=name]", { hasText: "seen" }).waitFor()
          const detail = await buttons()
          await p.fill("input[name=secret-ref-name]", "reader-key")
          await p.getByRole("button", { name: "Set reference" }).click()
          const error = p.locator("form[aria-label='Set the api_key reference'] .action-error")
          await error.waitFor()
          const refused = await error.textContent()
          // The page's settled state: its data-state and what it says.
          const settled = async () => {
            const state = p.locator("main [data-state]:not([data-state=loading])")
            await state.waitFor()
            return [await state.getAttribute("data-state"), await state.locator("p").first().innerText()]
          }
          await probed(`${baseUrl}/console/ns/${ns}/credential-sources`)
          const sources = await settled()
          // Unreadable is answered as missing (404), so the page does not tell that it exists.
          await probed(`${baseUrl}/console/ns/${ns}/credential-sources/${source.body.data.id}`)
          const unreadable = await settled()
          return { list, detail, refused, sources, unreadable, html: await p.content() }
        })
        yield* screenshot(v.page, "credential-source-unreadable")
        expect({ ...seen, html: seen.html.includes(SECRET_VALUE) }).toEqual({
          list: [],
          detail: ["Issue credential", "Set reference"],
          refused: `FORBIDDEN: ${forbidden.body.error.message}`,
          sources: ["empty", "No credential sources in this Namespace yet."],
          unreadable: ["not-found", "This credential source does not exist, or was deleted."],
          html: false
        })
        // The page's one write is the refused PATCH (`apiAs` goes through the context, not the page).
        expect(v.requests.slice(signedIn).filter((request) => !request.startsWith("GET "))).toEqual([`PATCH ${accountPath}/credential`])
        const after = yield* apiAs(page, baseUrl, "GET", accountPath)
        expect(after.body.data.credential).toBeNull()
        expect(v.errors).toEqual([])
      }).pipe(Effect.scoped), 300_000)
  })
})
