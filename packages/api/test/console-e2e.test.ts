/**
 * The console end to end in a real browser against the real service (DESIGN §16): the API with
 * the built console, the worker with the `local` Compute Driver and a real gateway answered by
 * the fake model server. Sign in → create a Namespace (live status to ready) → a Secret → a
 * Configuration → an Agent → deploy and watch the status reach `succeeded` → edit a workspace
 * file → stop → delete; screenshots of the main pages, also at a phone's size.
 */
import { beforeAll, describe, expect, layer as effectLayer } from "@effect/vitest"
import * as Compute from "@svc/core/drivers/compute"
import { Effect } from "effect"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import { groupAlive } from "../../../testing/gatewayRuntime.js"
import { createAccount, bindInstallationAdmin, PASSWORD } from "../../../testing/identity.js"
import { until } from "../../../testing/poll.js"
import { TestServer } from "../../../testing/server.js"
import { launchBrowser, signIn, watchedPage } from "./support/browser.js"
import { consoleServerLayer } from "./support/consoleServer.js"
import { apiAs, requireBuiltConsole, screenshot } from "./support/consolePages.js"
import { gatewayFixture, withWorker } from "./support/gatewayWorld.js"
import { fakeModelValues } from "./support/modelAgent.js"

const GOOD_KEY = "sk-console-e2e-7c1d9b"
beforeAll(() => requireBuiltConsole())
const world = await gatewayFixture("svc-console-e2e-", GOOD_KEY)
const dataDir = world.dataDir

const layer = withWorker(consoleServerLayer(Compute.layerFromConfiguration), dataDir)

describe("the console on a real service", () => {
  effectLayer(layer, { timeout: 20 * 60_000, excludeTestServices: true })((it) => {
    it.effect("sign in, Namespace, Secret, Configuration, Agent, deploy to succeeded, edit a file, stop, delete", () =>
      Effect.gen(function* () {
        const fake = world.fake()
        const { baseUrl } = yield* TestServer
        const admin = yield* createAccount("console-e2e@example.com", { name: "Console Admin" })
        yield* bindInstallationAdmin(admin.principalId)
        const browser = yield* launchBrowser
        const w = yield* watchedPage(browser)
        const { page } = w
        const step = (name: string, run: () => Promise<unknown>) => Effect.promise(() => run().catch((error: Error) => {
          throw new Error(`${name}: ${error.message}`)
        }))

        // Anonymous: the console sends the person to sign-in, remembering where they were going.
        yield* step("open", () => page.goto(`${baseUrl}/console`))
        yield* step("to sign-in", () => page.waitForURL(`${baseUrl}/console/sign-in?next=%2Fnamespaces`))
        yield* screenshot(page, "sign-in")
        yield* signIn(page, baseUrl, "console-e2e@example.com", PASSWORD)

        // A Namespace: provisioning, then ready (the list refetches while the worker works).
        yield* step("create namespace", async () => {
          await page.getByLabel("Name", { exact: true }).fill("console-e2e")
          await page.getByRole("button", { name: "Create Namespace" }).click()
          await page.locator("tr", { hasText: "console-e2e" }).locator("[data-status=ready]").waitFor({ timeout: 120_000 })
        })
        const ns = yield* step("namespace id", () => page.locator("tr", { hasText: "console-e2e" }).getAttribute("data-namespace")) as Effect.Effect<string>
        expect(ns).toMatch(/^ns_/)
        yield* screenshot(page, "namespaces")

        // The Namespace's Agents: none yet.
        yield* step("open namespace", async () => {
          await page.getByRole("link", { name: "console-e2e" }).click()
          await page.waitForURL(`${baseUrl}/console/ns/${ns}/agents`)
          await page.locator("[data-state=empty]").waitFor()
        })

        // A Secret and a Configuration, through the forms the Agent flow links to.
        yield* step("secret", async () => {
          await page.getByRole("link", { name: "New Secret" }).click()
          await page.getByLabel("Name", { exact: true }).fill("model-key")
          await page.getByLabel("Value").fill(GOOD_KEY)
          await page.getByRole("button", { name: "Create Secret" }).click()
          await page.waitForURL(`${baseUrl}/console/ns/${ns}/agents/new`)
        })
        yield* step("configuration", async () => {
          await page.goto(`${baseUrl}/console/ns/${ns}/configurations/new`)
          await page.getByLabel("Document (values, secretBindings)").fill(JSON.stringify({ values: fakeModelValues(fake) }))
          await page.getByRole("button", { name: "Create Configuration" }).click()
          await page.waitForURL(`${baseUrl}/console/ns/${ns}/agents/new`)
        })

        // The Agent: a Configuration, an api_key binding to the Secret.
        yield* step("agent", async () => {
          await page.getByLabel("Name", { exact: true }).fill("console-bot")
          await page.locator("select[name=configuration]").selectOption({ index: 1 })
          await page.locator("select[name=harness-method]").selectOption("api_key")
          await page.locator("select[name=secret]").selectOption({ label: "model-key" })
          await page.getByRole("button", { name: "Create Agent" }).click()
          await page.waitForURL(new RegExp(`/console/ns/${ns}/agents/agt_[0-9a-f-]{36}$`))
        })
        const agentId = page.url().split("/").pop()!
        const agentPath = `/namespaces/${ns}/agents/${agentId}`
        const agent = (yield* apiAs(page, baseUrl, "GET", agentPath)).body.data
        expect({ name: agent.name, harnessAuth: agent.harnessAuth, desiredRuntimeState: agent.desiredRuntimeState })
          .toEqual({ name: "console-bot", harnessAuth: { method: "api_key", source: { kind: "secret", namespaceId: ns, id: expect.stringMatching(/^sec_/) } }, desiredRuntimeState: "stopped" })

        // Operator step no console page owns yet: the Agent's principal may use the key (SPEC 2.5).
        const role = yield* apiAs(page, baseUrl, "POST", `/namespaces/${ns}/iam/roles`, { name: "use-model-key", permissions: ["secret:operate"] })
        expect(role.status).toBe(201)
        const binding = yield* apiAs(page, baseUrl, "POST", `/namespaces/${ns}/iam/access-bindings`, {
          principalId: agent.servicePrincipalId,
          roleId: role.body.data.id,
          resource: { kind: "secret", id: agent.harnessAuth.source.id }
        })
        expect(binding.status).toBe(201)

        // Deploy, and watch the live status until it succeeds.
        yield* step("deploy", async () => {
          await page.getByRole("button", { name: "Deploy" }).click()
          await page.locator("[aria-label='Deployment status'] [data-status=succeeded]").waitFor({ timeout: 15 * 60_000 })
        })
        const deployed = (yield* apiAs(page, baseUrl, "GET", agentPath)).body.data
        expect(deployed.desiredRuntimeState).toBe("running")
        const deploymentId = yield* step("deployment id", () => page.locator("[aria-label='Deployment status']").getAttribute("data-deployment")) as Effect.Effect<string>
        expect(deploymentId).toBe(deployed.activeRevisionId)
        // The status came over the event stream: once it is open, the page stops polling (one poll
        // may already be on its way, one more before the first event arrives).
        const stream = w.requests.indexOf(`GET ${agentPath}/deployments/${deploymentId}/events`)
        expect(stream).toBeGreaterThanOrEqual(0)
        const pollsAfter = w.requests.slice(stream).filter((r) => r === `GET ${agentPath}/deployments/${deploymentId}`)
        expect(pollsAfter.length).toBeLessThanOrEqual(2)
        yield* step("active shown", () => page.locator(`[data-revision='${deploymentId}']`, { hasText: "(active)" }).waitFor())
        yield* screenshot(page, "agent-detail")

        // A workspace file, written through the gateway and read back through the API.
        const soul = "# Soul\nWritten from the console.\n"
        yield* step("workspace file", async () => {
          await page.getByRole("tab", { name: "SOUL.md" }).click()
          const editor = page.locator("textarea[name='file-SOUL.md']")
          await editor.waitFor()
          await editor.fill(soul)
          await page.getByRole("button", { name: "Save SOUL.md" }).click()
          await page.getByText(`Saved (${Buffer.byteLength(soul)} bytes).`).waitFor()
        })
        expect((yield* apiAs(page, baseUrl, "GET", `${agentPath}/workspace/files/SOUL.md`)).body.data).toEqual({ name: "SOUL.md", content: soul })

        // The Agents list, wide and at a phone's size, and the detail at a phone's size.
        yield* step("list", async () => {
          await page.getByRole("link", { name: "Agents" }).click()
          await page.locator(`[data-agent='${agentId}']`).waitFor()
        })
        yield* screenshot(page, "agents")
        const phone = yield* watchedPage(browser, { width: 390, height: 844 })
        yield* signIn(phone.page, baseUrl, "console-e2e@example.com", PASSWORD)
        yield* step("phone list", async () => {
          await phone.page.goto(`${baseUrl}/console/ns/${ns}/agents`)
          await phone.page.locator(`[data-agent='${agentId}']`).waitFor()
        })
        yield* screenshot(phone.page, "agents-mobile")
        yield* step("phone detail", async () => {
          await phone.page.getByRole("link", { name: "console-bot" }).click()
          await phone.page.locator("[aria-label='Deployment status'] [data-status=succeeded]").waitFor()
        })
        yield* screenshot(phone.page, "agent-detail-mobile")

        // Stop: desired stopped, then the worker clears the active revision and the gateway is gone.
        const record = JSON.parse(yield* Effect.promise(() =>
          fs.readFile(path.join(Compute.namespaceDirectory(dataDir, ns), "agents", agentId, "gateway.json"), "utf8"))) as { pid: number }
        yield* step("stop", async () => {
          await page.getByRole("link", { name: "console-bot" }).click()
          await page.getByRole("button", { name: "Stop" }).click()
          await page.locator("[data-status=stopped]").first().waitFor()
        })
        const stopped = yield* until(apiAs(page, baseUrl, "GET", agentPath), (r) => r.body.data?.activeRevisionId === undefined, 120)
        expect(stopped.body.data.desiredRuntimeState).toBe("stopped")
        expect(yield* Effect.promise(() => groupAlive(record.pid))).toBe(false)

        // Delete (the console asks first), back to the list; the teardown removes the Agent.
        yield* step("delete", async () => {
          await page.reload()
          await page.getByRole("button", { name: "Delete" }).click()
          await page.waitForURL(`${baseUrl}/console/ns/${ns}/agents`)
        })
        expect(w.dialogs).toEqual(["confirm: Delete Agent console-bot?"])
        yield* until(apiAs(page, baseUrl, "GET", agentPath), (r) => r.status === 404, 120)
        yield* step("gone from the list", () => page.locator("[data-state=empty]").waitFor({ timeout: 60_000 }))

        expect(w.errors).toEqual([])
        expect(yield* Effect.promise(() => w.violations())).toEqual([])
        expect(w.consoleMessages.filter((m) => m.startsWith("error:") && !m.includes("404"))).toEqual([])
      }).pipe(Effect.scoped), 20 * 60_000)
  })
})
