/**
 * The console's resource pages (issue 15) in Debian's chromium against the real service: an
 * Installation administrator creates, edits and deletes a Configuration (a refused value is shown
 * at its JSON Pointer, the pointer the service gives too), creates a Secret whose value never
 * reaches the DOM or any response, issues a service key that is shown once and revokes it,
 * creates an IAM Role and AccessBinding, creates and disables an account, and views the
 * Installation and its Backends; a Namespace viewer bound through the API is offered no write
 * and sends none, and pages it may not read show the denied state. No gateway is needed.
 */
import { beforeAll, describe, expect, layer } from "@effect/vitest"
import { BuiltinRoles } from "@svc/core/iam"
import { Effect } from "effect"
import { unavailableCompute } from "../../../testing/drivers.js"
import { createAccount, PASSWORD } from "../../../testing/identity.js"
import { signIn, watchedPage } from "./support/browser.js"
import { consoleServerLayer } from "./support/consoleServer.js"
import { apiAs, requireBuiltConsole, screenshot, signedInAdmin, stepper } from "./support/consolePages.js"

beforeAll(() => requireBuiltConsole())

const SECRET_VALUE = `value-${crypto.randomUUID()}`
const NEW_VALUE = `replaced-${crypto.randomUUID()}`

const writesIn = (requests: ReadonlyArray<string>) => requests.filter((request) => !request.startsWith("GET "))

describe("the console's resource pages", () => {
  layer(consoleServerLayer(unavailableCompute), { timeout: 300_000 })((it) => {
    it.effect("an administrator manages every resource; a viewer is offered no write and sends none", () =>
      Effect.gen(function* () {
        const { baseUrl, ns, browser, w, page, step, responses } = yield* signedInAdmin("pages")
        const bound = yield* createAccount("pages-bound@example.com")

        // Configurations: empty, a refused value at its pointer (as the service would say), create, edit, delete.
        yield* step("configurations empty", async (p) => {
          await p.goto(`${baseUrl}/console/ns/${ns}/configurations`)
          await p.locator("[data-state=empty]").waitFor()
        })
        const refusedBody = { kind: "agent", values: { workspace: "/etc" } }
        const serverSays = yield* apiAs(page, baseUrl, "POST", `/namespaces/${ns}/configurations`, refusedBody)
        expect([serverSays.status, serverSays.body.error.code, serverSays.body.error.details])
          .toEqual([400, "INVALID_REQUEST", [{ code: "INVALID_VALUE", path: "/values/workspace" }]])
        const shown = yield* step("refused value", async (p) => {
          await p.fill("textarea[name=configuration-document]", JSON.stringify({ values: refusedBody.values }))
          await p.getByRole("button", { name: "Create Configuration" }).click()
          const problem = p.locator(".problems li")
          await problem.first().waitFor()
          return problem.evaluateAll((items) => items.map((item) => [item.getAttribute("data-pointer"), item.getAttribute("data-code")]))
        })
        expect(shown).toEqual([["/values/workspace", "INVALID_VALUE"]])
        const notJson = yield* step("not JSON", async (p) => {
          await p.fill("textarea[name=configuration-document]", "{ values: ")
          await p.getByRole("button", { name: "Create Configuration" }).click()
          return p.locator(".problems li").evaluateAll((items) => items.map((item) => [item.getAttribute("data-pointer"), item.getAttribute("data-code")]))
        })
        expect(notJson).toEqual([["", "INVALID_FORMAT"]])
        const configurationId = yield* step("create configuration", async (p) => {
          await p.fill("textarea[name=configuration-document]", JSON.stringify({ values: { model: "small" } }))
          await p.getByRole("button", { name: "Create Configuration" }).click()
          const row = p.locator("tr[data-configuration]")
          await row.waitFor()
          return row.getAttribute("data-configuration")
        })
        expect(configurationId).toMatch(/^cfg_/)
        yield* screenshot(page, "configurations")
        const generation = yield* step("edit configuration", async (p) => {
          await p.locator(`tr[data-configuration='${configurationId}'] a`).click()
          await p.locator("[data-field=generation]", { hasText: "1" }).waitFor()
          await p.fill("textarea[name=configuration-document]", JSON.stringify({ values: { model: "large" } }))
          await p.getByRole("button", { name: "Save (new generation)" }).click()
          await p.locator("[data-field=generation]", { hasText: "2" }).waitFor()
          return p.inputValue("textarea[name=configuration-document]")
        })
        expect(JSON.parse(generation)).toEqual({ values: { model: "large" }, secretBindings: {} })
        yield* step("delete configuration", async (p) => {
          await p.getByRole("button", { name: "Delete" }).click()
          await p.waitForURL(`${baseUrl}/console/ns/${ns}/configurations`)
          await p.locator("[data-state=empty]").waitFor()
        })
        const afterDelete = yield* apiAs(page, baseUrl, "GET", `/namespaces/${ns}/configurations/${configurationId}`)
        expect([afterDelete.status, afterDelete.body.error.code]).toEqual([404, "NOT_FOUND"])
        // The deleted one, a malformed ID and a malformed Namespace are each "not found" on screen.
        const missing = yield* step("not found", async (p) => {
          const states: Array<string | null> = []
          for (const path of [`ns/${ns}/configurations/${configurationId}`, `ns/${ns}/configurations/cfg_nope`, "ns/nope/secrets"]) {
            await p.goto(`${baseUrl}/console/${path}`)
            states.push(await p.locator("[data-state=not-found] p").first().textContent())
          }
          return states
        })
        expect(missing).toEqual([
          "This Configuration does not exist, or was deleted.",
          "This Configuration does not exist, or was deleted.",
          "This Namespace does not exist, or was deleted."
        ])

        // Secrets: the value goes out in the request body and nowhere else.
        const secretId = yield* step("create secret", async (p) => {
          await p.goto(`${baseUrl}/console/ns/${ns}/secrets`)
          await p.locator("[data-state=empty]").waitFor()
          await p.fill("form[aria-label='Create a Secret'] input[name=secret-name]", "db-password")
          await p.fill("form[aria-label='Create a Secret'] input[name=secret-value]", SECRET_VALUE)
          await p.getByRole("button", { name: "Create Secret" }).click()
          const row = p.locator("tr[data-secret]")
          await row.waitFor()
          return row.getAttribute("data-secret")
        })
        yield* step("replace value", async (p) => {
          await p.fill(`tr[data-secret='${secretId}'] input[name=secret-value]`, NEW_VALUE)
          await p.getByRole("button", { name: "Replace value" }).click()
          await p.getByRole("status").filter({ hasText: "Replaced." }).waitFor()
        })
        const secretDom = yield* step("secret DOM", async (p) => {
          await p.reload()
          await p.locator(`tr[data-secret='${secretId}'] form`).waitFor()
          await p.locator("form[aria-label='Create a Secret']").waitFor()
          return { html: await p.content(), fields: await Promise.all((await p.locator("input[name=secret-value]").all()).map((input) => input.inputValue())) }
        })
        yield* screenshot(page, "secrets")
        expect(secretDom.fields).toEqual(["", ""])
        expect([secretDom.html.includes(SECRET_VALUE), secretDom.html.includes(NEW_VALUE), secretDom.html.includes("db-password")]).toEqual([false, false, true])
        const secretList = yield* apiAs(page, baseUrl, "GET", `/namespaces/${ns}/secrets`)
        expect(secretList.body.data.map((s: { id: string; name: string }) => [s.id, s.name])).toEqual([[secretId, "db-password"]])

        // Service keys: an Installation service principal from its page, a key shown once, revoked.
        const principalId = yield* step("service principal", async (p) => {
          await p.goto(`${baseUrl}/console/admin/service-principals`)
          await p.locator("[data-state=empty]").waitFor()
          await p.fill("input[name=principal-name]", "deploy-bot")
          await p.getByRole("button", { name: "Create service principal" }).click()
          const row = p.locator("tr[data-principal]")
          await row.waitFor()
          return row.getAttribute("data-principal")
        })
        const issued = yield* step("issue key", async (p) => {
          await p.locator(`tr[data-principal='${principalId}']`).getByRole("link", { name: "Issue a key" }).click()
          await p.waitForURL(/\/console\/admin\/service-keys\?/)
          expect(await p.inputValue("input[name=key-principal]")).toBe(principalId)
          await p.fill("input[name=key-name]", "ci")
          await p.getByRole("button", { name: "Issue key" }).click()
          await p.locator("[data-issued-key]").waitFor()
          return { key: (await p.locator("[data-issued-key]").textContent())!, id: (await p.locator("[data-key-id]").textContent())! }
        })
        expect(issued.id).toMatch(/^key_/)
        const withKey = () => Effect.promise(() => fetch(`${baseUrl}/permissions`, { headers: { "x-api-key": issued.key } }).then((r) => r.status))
        expect(yield* withKey()).toBe(200)
        yield* step("revoke key", async (p) => {
          expect(await p.inputValue("input[name=revoke-key-id]")).toBe(issued.id)
          await p.getByRole("button", { name: "Revoke key" }).click()
          await p.locator(`[data-revoked='${issued.id}']`).waitFor()
        })
        expect(yield* withKey()).toBe(401)
        const keyAfterNavigation = yield* step("key gone", async (p) => {
          await p.getByRole("link", { name: "Backends" }).click()
          await p.getByRole("heading", { name: "Backends" }).waitFor()
          await p.goBack()
          await p.getByRole("heading", { name: "Service keys" }).waitFor()
          return { shown: await p.locator("[data-issued-key]").count(), inPage: (await p.content()).includes(issued.key) }
        })
        expect(keyAfterNavigation).toEqual({ shown: 0, inPage: false })

        // IAM: a custom Role and an AccessBinding of it, then both removed.
        const roleId = yield* step("create role", async (p) => {
          await p.goto(`${baseUrl}/console/ns/${ns}/iam/roles`)
          await p.fill("input[name=role-name]", "config-reader")
          await p.fill("input[name=role-permissions]", "configuration:read, preset:read")
          await p.getByRole("button", { name: "Create Role" }).click()
          const row = p.locator("tr[data-role]", { hasText: "config-reader" })
          await row.waitFor()
          return row.getAttribute("data-role")
        })
        const bindingId = yield* step("create binding", async (p) => {
          await p.getByRole("link", { name: "Access bindings" }).click()
          await p.fill("input[name=binding-principal]", bound.principalId)
          await p.locator(`select[name=binding-role] option[value='${roleId}']`).waitFor({ state: "attached" })
          await p.selectOption("select[name=binding-role]", roleId!)
          await p.getByRole("button", { name: "Create binding" }).click()
          const row = p.locator("tr[data-binding]", { hasText: bound.principalId })
          await row.waitFor()
          return row.getAttribute("data-binding")
        })
        const binding = yield* apiAs(page, baseUrl, "GET", `/namespaces/${ns}/iam/access-bindings/${bindingId}`)
        expect([binding.status, binding.body.data.principalId, binding.body.data.roleId, binding.body.data.resource])
          .toEqual([200, bound.principalId, roleId, { kind: "namespace", id: ns }])
        yield* screenshot(page, "iam")
        // A Role still bound is refused with the service's code, and stays.
        const refused = yield* step("role in use", async (p) => {
          await p.getByRole("link", { name: "Roles" }).click()
          await p.locator(`tr[data-role='${roleId}']`).getByRole("button", { name: "Delete" }).click()
          const error = p.locator(".action-error")
          await error.waitFor()
          return [await error.getAttribute("data-code"), await p.locator(`tr[data-role='${roleId}']`).count()]
        })
        expect(refused).toEqual(["RESOURCE_CONFLICT", 1])
        yield* step("delete binding and role", async (p) => {
          await p.getByRole("link", { name: "Access bindings" }).click()
          await p.locator(`tr[data-binding='${bindingId}']`).getByRole("button", { name: "Delete" }).click()
          await p.locator("[data-state=empty]").waitFor()
          await p.getByRole("link", { name: "Roles" }).click()
          await p.locator(`tr[data-role='${roleId}']`).getByRole("button", { name: "Delete" }).click()
          await p.locator(`tr[data-role='${roleId}']`).waitFor({ state: "detached" })
        })

        // Accounts: create one, then disable it with the read's version.
        const account = yield* step("account", async (p) => {
          await p.goto(`${baseUrl}/console/admin/accounts`)
          await p.locator("[data-recovery=none]").waitFor()
          await p.fill("input[name=account-email]", "new-person@example.com")
          await p.fill("input[name=account-password]", "a long enough password")
          await p.getByRole("button", { name: "Create account" }).click()
          await p.locator("[data-field=disabled]", { hasText: "enabled" }).waitFor()
          const before = await p.locator("[data-field=version]").textContent()
          await p.getByRole("button", { name: "Disable" }).click()
          await p.locator("[data-field=disabled]", { hasText: "disabled" }).waitFor()
          const after = await p.locator("[data-field=version]").textContent()
          await p.getByRole("button", { name: "Enable" }).click()
          await p.locator("[data-field=disabled]", { hasText: "enabled" }).waitFor()
          return { before, after, enabled: await p.locator("[data-field=version]").textContent(), html: await p.content() }
        })
        expect([Number(account.after), Number(account.enabled)]).toEqual([Number(account.before) + 1, Number(account.before) + 2])
        expect(account.html.includes("a long enough password")).toBe(false)

        // Installation and Backends, read-only.
        const installation = yield* step("installation", async (p) => {
          await p.goto(`${baseUrl}/console/admin/installation`)
          return p.locator("[data-field=execution-modes]").textContent()
        })
        expect(installation).toBe("embedded")
        yield* step("backends", async (p) => {
          await p.goto(`${baseUrl}/console/admin/backends`)
          await p.locator("[data-state=empty]", { hasText: "No Backends" }).waitFor()
        })

        // Nothing the page fetched carried either Secret value; nothing went wrong in the page.
        const bodies = yield* Effect.promise(responses)
        expect(bodies.filter((body) => body.includes(SECRET_VALUE) || body.includes(NEW_VALUE))).toEqual([])
        expect([w.errors, w.dialogs.filter((d) => !d.startsWith("confirm:"))]).toEqual([[], []])

        // A viewer of the Namespace, created and bound through the API by the administrator.
        const created = yield* apiAs(page, baseUrl, "POST", "/api/auth/accounts", { email: "pages-viewer@example.com", password: PASSWORD })
        expect(created.status).toBe(201)
        const viewerBinding = yield* apiAs(page, baseUrl, "POST", `/namespaces/${ns}/iam/access-bindings`, {
          principalId: created.body.data.principalId,
          roleId: BuiltinRoles.namespaceViewer.id,
          resource: { kind: "namespace", id: ns }
        })
        expect(viewerBinding.status).toBe(201)
        const seeded = yield* apiAs(page, baseUrl, "POST", `/namespaces/${ns}/configurations`, { kind: "agent", values: { model: "seen" } })
        const preset = yield* apiAs(page, baseUrl, "POST", `/namespaces/${ns}/presets`, { name: "starter", template: {} })
        expect([seeded.status, preset.status]).toEqual([201, 201])

        const v = yield* watchedPage(browser)
        const viewerStep = stepper(v.page)
        yield* signIn(v.page, baseUrl, "pages-viewer@example.com", PASSWORD)
        const signedIn = v.requests.length
        const offered = yield* viewerStep("viewer pages", async (p) => {
          const writeControls = () => p.locator("form, button.danger").count()
          // Controls depend on the permission probe: count them once it has answered and a frame has rendered.
          const probed = async (url: string, probe: string) => {
            await Promise.all([p.waitForResponse((r) => new URL(r.url()).pathname === probe), p.goto(url)])
            await p.evaluate("new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)))")
          }
          await probed(`${baseUrl}/console/ns/${ns}/configurations`, `/namespaces/${ns}/permissions`)
          await p.locator(`tr[data-configuration='${seeded.body.data.id}']`).waitFor()
          const configurations = await writeControls()
          await probed(`${baseUrl}/console/ns/${ns}/configurations/${seeded.body.data.id}`, `/namespaces/${ns}/permissions`)
          await p.locator("[data-field=generation]").waitFor()
          const detail = {
            readOnly: await p.locator("textarea[name=configuration-document]").getAttribute("readonly"),
            buttons: await p.locator("main button").count()
          }
          await probed(`${baseUrl}/console/ns/${ns}/secrets`, `/namespaces/${ns}/permissions`)
          await p.locator(`tr[data-secret='${secretId}']`).waitFor()
          const secrets = await writeControls()
          await probed(`${baseUrl}/console/ns/${ns}/presets`, `/namespaces/${ns}/permissions`)
          await p.locator(`tr[data-preset='${preset.body.data.id}']`).waitFor()
          const presets = await writeControls()
          const denied: Record<string, number> = {}
          for (const path of [`ns/${ns}/iam/roles`, `ns/${ns}/iam/access-bindings`, "admin/backends", "admin/installation", "admin/service-keys", "admin/accounts"]) {
            await probed(`${baseUrl}/console/${path}`, path.startsWith("ns/") ? `/namespaces/${ns}/permissions` : "/permissions")
            await p.locator("[data-state=denied]").waitFor()
            denied[path] = await writeControls()
          }
          return { configurations, detail, secrets, presets, denied }
        })
        yield* screenshot(v.page, "denied")
        expect(offered).toEqual({
          configurations: 0,
          detail: { readOnly: "", buttons: 0 },
          secrets: 0,
          presets: 0,
          denied: {
            [`ns/${ns}/iam/roles`]: 0,
            [`ns/${ns}/iam/access-bindings`]: 0,
            "admin/backends": 0,
            "admin/installation": 0,
            "admin/service-keys": 0,
            "admin/accounts": 0
          }
        })
        expect(writesIn(v.requests.slice(signedIn))).toEqual([])
        expect(v.requests.slice(signedIn)).toContain("GET /backends")
        expect(v.errors).toEqual([])
      }).pipe(Effect.scoped), 300_000)
  })
})
