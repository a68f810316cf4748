/**
 * `svc agents …` and `svc deploy --wait` against the real service with the `local` Compute
 * Driver and real OpenClaw gateways (one at a time), answered by the fake model server: a
 * deployment followed to `succeeded` (exit 0) and one whose model key is rejected followed to
 * `failed` with RUNTIME_AUTHENTICATION_FAILED (exit 9).
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { type FakeModelServer, startFakeModelServer } from "../../../testing/fakeModelServer.js"
import { ensureTestRuntime } from "../../../testing/gatewayRuntime.js"
import { api, eventually, jsonOf, runCli, type Service, startService } from "./support/service.js"

const GOOD_KEY = "sk-cli-good-8a1d2c3b4e"
const BAD_KEY = "sk-cli-rejected-7f6e5d"
const REV_ID = /^rev_[0-9a-f-]{36}$/

let service: Service
let fake: FakeModelServer
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "svc-cli-deploy-"))
const dir = path.join(scratch, "config")

beforeAll(async () => {
  await ensureTestRuntime()
  fake = await startFakeModelServer({ apiKey: GOOD_KEY })
  service = await startService()
  const login = await runCli(dir, ["login", "--url", service.baseUrl, "--key-file", service.keyFile])
  // On failure, what the CLI and the service said (a 5xx once failed this in CI: exit 8).
  expect(login.code, `${login.stderr}\n${service.process.output()}`).toBe(0)
}, 20 * 60_000)

afterAll(async () => {
  await service?.stop()
  await fake?.close()
  fs.rmSync(scratch, { recursive: true, force: true })
}, 120_000)

/** A Secret holding `modelKey`, and an Agent file whose harness reads it (SPEC 2.5). */
const agentFile = async (namespaceId: string, configurationId: string, name: string, modelKey: string) => {
  const secret = await api(service, service.adminKey, "POST", `/namespaces/${namespaceId}/secrets`, { name: `${name}-key`, value: modelKey })
  expect(secret.status).toBe(201)
  const file = path.join(scratch, `${name}.json`)
  fs.writeFileSync(file, JSON.stringify({
    name,
    configurationId,
    harnessAuth: { method: "api_key", source: { kind: "secret", namespaceId, id: secret.body.data.id } }
  }))
  return { file, secretId: secret.body.data.id as string }
}

/** The Agent's own principal may use its key (SPEC 2.5). */
const grantKey = async (namespaceId: string, principalId: string, secretId: string, roleId: string) => {
  const binding = await api(service, service.adminKey, "POST", `/namespaces/${namespaceId}/iam/access-bindings`, {
    principalId,
    roleId,
    resource: { kind: "secret", id: secretId }
  })
  expect(binding.status).toBe(201)
}

/** Deleted Agents disappear once torn down: one gateway at a time. */
const gone = (name: string) => eventually(() => runCli(dir, ["agents", "get", name, "--ns", "default"]), (r) => r.code === 5, 300)

describe("svc agents and svc deploy --wait on a real gateway", () => {
  it("create, list, get; deploy --wait reaches succeeded; a rejected model key ends failed with exit 9", async () => {
    const ns = await eventually(() => runCli(dir, ["ns", "get", "default", "--json"]), (r) => r.code === 0 && jsonOf(r).status === "ready")
    const namespaceId = jsonOf(ns).id as string
    const configuration = await api(service, service.adminKey, "POST", `/namespaces/${namespaceId}/configurations`, {
      kind: "agent",
      values: {
        models: {
          providers: {
            fake: {
              baseUrl: fake.baseUrl,
              api: "openai-completions",
              apiKey: { source: "env", provider: "default", id: "MODEL_API_KEY" },
              models: [{ id: fake.model, name: "Fake" }]
            }
          }
        },
        agents: { defaults: { model: `fake/${fake.model}` } }
      }
    })
    expect(configuration.status).toBe(201)
    const configurationId = configuration.body.data.id as string
    const role = await api(service, service.adminKey, "POST", `/namespaces/${namespaceId}/iam/roles`, { name: "use-model-key", permissions: ["secret:operate"] })
    expect(role.status).toBe(201)

    const good = await agentFile(namespaceId, configurationId, "cli-bot", GOOD_KEY)
    const created = jsonOf(await runCli(dir, ["agents", "create", "--ns", "default", "--file", good.file, "--json"]))
    expect(created).toMatchObject({
      id: expect.stringMatching(/^agt_/),
      namespaceId,
      name: "cli-bot",
      configurationId,
      status: "active",
      desiredRuntimeState: "stopped"
    })
    expect(created).not.toHaveProperty("activeRevisionId")
    await grantKey(namespaceId, created.servicePrincipalId as string, good.secretId, role.body.data.id as string)

    // The same name again is a conflict (exit 6).
    expect(await runCli(dir, ["agents", "create", "--ns", "default", "--file", good.file])).toEqual({
      code: 6,
      stdout: "",
      stderr: "svc: RESOURCE_CONFLICT: An Agent with this name already exists in the Namespace.\n"
    })
    const listed = jsonOf<Array<{ id: string }>>(await runCli(dir, ["agents", "list", "--ns", namespaceId, "--json"]))
    expect(listed.map((a) => a.id)).toEqual([created.id])
    const table = await runCli(dir, ["agents", "list", "--ns", "default"])
    expect(table.stdout.split("\n")[0]).toMatch(/^ID +NAME +STATUS +DESIRED +ACTIVE REVISION +CREATED$/)
    expect(table.stdout.split("\n")[1]).toMatch(new RegExp(`^${created.id as string} +cli-bot +active +stopped +- +`))
    expect(jsonOf(await runCli(dir, ["agents", "get", "cli-bot", "--ns", "default", "--json"]))).toEqual(created)

    // Followed until it ends; not a terminal, so one line per change, the last one terminal.
    const deployed = await runCli(dir, ["deploy", "cli-bot", "--ns", "default", "--wait"], undefined)
    expect(deployed.stderr).toBe("")
    expect(deployed.code).toBe(0)
    const lines = deployed.stdout.trimEnd().split("\n")
    const revision = lines[0]!.split(" ")[0]!
    expect(revision).toMatch(REV_ID)
    const progress = lines.slice(0, -2)
    for (const line of progress) expect(line).toMatch(new RegExp(`^${revision}  (queued|running|succeeded)`))
    expect(progress.at(-1)).toBe(`${revision}  succeeded`)
    expect(lines.slice(-2)).toEqual([`deployment  ${revision}`, "status      succeeded"])
    // --wait followed the deployment's event stream (pushed by the worker's NOTIFY), no polling.
    const requests = service.process
      .output()
      .split("\n")
      .filter((line) => line.includes('"http request"'))
      .map((line) => (JSON.parse(line) as { annotations: { method: string; path: string; status: number } }).annotations)
    expect(requests.filter((r) => r.path.endsWith(`/deployments/${revision}/events`)).map((r) => [r.method, r.status])).toEqual([["GET", 200]])
    expect(requests.filter((r) => r.path.endsWith(`/deployments/${revision}`))).toEqual([])
    expect(jsonOf(await runCli(dir, ["agents", "get", "cli-bot", "--ns", "default", "--json"]))).toMatchObject({ activeRevisionId: revision })

    expect(jsonOf(await runCli(dir, ["agents", "delete", "cli-bot", "--ns", "default", "--json"]))).toMatchObject({ id: created.id, status: "deleting" })
    expect(await gone("cli-bot")).toEqual({ code: 5, stdout: "", stderr: "svc: NOT_FOUND: no Agent named cli-bot in this Namespace that you can read\n" })

    // A model server that rejects the key: the deployment fails early, exit 9.
    const bad = await agentFile(namespaceId, configurationId, "cli-bad-bot", BAD_KEY)
    const badAgent = jsonOf(await runCli(dir, ["agents", "create", "--ns", "default", "--file", bad.file, "--json"]))
    await grantKey(namespaceId, badAgent.servicePrincipalId as string, bad.secretId, role.body.data.id as string)
    const failed = await runCli(dir, ["deploy", "cli-bad-bot", "--ns", "default", "--wait", "--json"])
    expect(failed.code).toBe(9)
    const final = JSON.parse(failed.stdout) as Record<string, unknown>
    expect(final).toMatchObject({
      deploymentId: expect.stringMatching(REV_ID),
      namespaceId,
      agentId: badAgent.id,
      status: "failed",
      error: { code: "RUNTIME_AUTHENTICATION_FAILED", message: expect.any(String) },
      progress: null,
      warnings: []
    })
    // With --json, progress goes to stderr and stdout stays one document.
    const stderr = failed.stderr.trimEnd().split("\n")
    expect(stderr.at(-1)).toMatch(/^svc: RUNTIME_AUTHENTICATION_FAILED: .+/)
    expect(stderr.at(-2)).toMatch(new RegExp(`^${final.deploymentId as string}  failed  .*RUNTIME_AUTHENTICATION_FAILED: `))
    expect(failed.stdout + failed.stderr).not.toContain(BAD_KEY)

    expect(jsonOf(await runCli(dir, ["agents", "stop", "cli-bad-bot", "--ns", "default", "--json"]))).toMatchObject({ desiredRuntimeState: "stopped" })
    expect((await runCli(dir, ["agents", "delete", "cli-bad-bot", "--ns", "default"])).code).toBe(0)
    await gone("cli-bad-bot")
  }, 20 * 60_000)
})
