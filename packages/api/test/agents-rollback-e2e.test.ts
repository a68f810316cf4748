/**
 * Rollback on a real gateway (DESIGN §18): the real HTTP API, the real worker engine with the
 * `local` Compute Driver, and a real OpenClaw gateway answered by the fake model server. Deploy A,
 * change the Configuration and deploy B, redeploy A's revision: the gateway then runs A's
 * configuration, read back from the `openclaw.json` it was started with and from its own record.
 * The redeploy is watched through the deployment event stream, driven by the real worker's
 * writes. Needs SVC_RUNTIME_DIR (the installed gateway runtime).
 */
import { describe, expect, layer as effectLayer } from "@effect/vitest"
import * as Compute from "@svc/core/drivers/compute"
import { Effect } from "effect"
import * as fs from "node:fs/promises"
import { until } from "../../../testing/poll.js"
import { TestServer } from "../../../testing/server.js"
import { expectData, type Headers, seedAdmin, send } from "./support/iamServer.js"
import { gatewayFixture, gatewayWorldLayer } from "./support/gatewayWorld.js"
import { fakeModelValues, setUpModelAgent } from "./support/modelAgent.js"

const KEY = "sk-rollback-e2e-7c1d2f"
const world = await gatewayFixture("svc-rollback-e2e-", KEY)
const dataDir = world.dataDir

const layer = gatewayWorldLayer(dataDir)

/** Every status event of a stream until it closes, read raw. */
const collectStatuses = (url: string, headers: Headers) =>
  Effect.promise(async () => {
    const response = await fetch(url, { headers })
    const text = await response.text()
    const statuses = text.split("\n\n").filter((block) => block.startsWith("event: status\n"))
      .map((block) => JSON.parse(block.slice("event: status\ndata: ".length)) as { status: string; deploymentId: string })
    return { status: response.status, contentType: response.headers.get("content-type"), statuses }
  })

describe("rollback on a real gateway", () => {
  effectLayer(layer, { timeout: 20 * 60_000, excludeTestServices: true })((it) => {
    it.effect("deploy A, change and deploy B, redeploy A: the gateway runs A's configuration", () =>
      Effect.gen(function* () {
        const fake = world.fake()
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdmin("rollback-e2e@example.com")
        const call = (method: string, p: string, body?: unknown) => send(baseUrl, method, p, admin.headers, body)
        const { ns, configuration, agent, agentPath } = yield* setUpModelAgent(call, { namespace: "rollback-e2e", agent: "rollback-bot", modelKey: KEY, fake })
        const layout = Compute.agentLayout(Compute.namespaceDirectory(dataDir, ns), agent.id)
        const rendered = Effect.promise(async () => JSON.parse(await fs.readFile(layout.configFile, "utf8")) as {
          models: { providers: { fake: { models: Array<{ name: string }> } } }
        })
        const record = Effect.promise(async () => JSON.parse(await fs.readFile(layout.processFile, "utf8")) as { revisionId: string })
        const deployment = (id: string) => call("GET", `${agentPath}/deployments/${id}`)
        const finished = (id: string) =>
          Effect.map(until(deployment(id), (r) => ["succeeded", "failed"].includes(r.body.data?.status)), (r) => expectData(r, 200).status)

        const a = expectData(yield* call("POST", `${agentPath}/deploy`), 202)
        expect(yield* finished(a.id)).toBe("succeeded")
        expect((yield* rendered).models.providers.fake.models[0]!.name).toBe("Fake")

        expectData(yield* call("PATCH", `/namespaces/${ns}/configurations/${configuration.id}`, { values: fakeModelValues(fake, "Fake B") }), 200)
        const b = expectData(yield* call("POST", `${agentPath}/deploy`), 202)
        expect(yield* finished(b.id)).toBe("succeeded")
        expect((yield* rendered).models.providers.fake.models[0]!.name).toBe("Fake B")
        expect((yield* record).revisionId).toBe(b.id)

        const c = expectData(yield* call("POST", `${agentPath}/revisions/${a.id}/redeploy`), 202)
        expect(c.rolledBackFrom).toBe(a.id)
        expect(c.configuration).toEqual(a.configuration)
        // Watched live: the real worker's claim and success arrive as events; the stream then closes.
        const watched = yield* collectStatuses(`${baseUrl}${agentPath}/deployments/${c.id}/events`, admin.headers)
        expect(watched.status).toBe(200)
        expect(watched.contentType).toBe("text/event-stream")
        const sequence = watched.statuses.map((s) => s.status)
        expect(sequence.at(-1)).toBe("succeeded")
        expect(["queued", "running", "succeeded"].filter((s) => sequence.includes(s))).toEqual(sequence)
        expect(watched.statuses.every((s) => s.deploymentId === c.id)).toBe(true)

        // The gateway runs A's configuration again, as revision C.
        expect(expectData(yield* call("GET", agentPath), 200).activeRevisionId).toBe(c.id)
        expect((yield* rendered).models.providers.fake.models[0]!.name).toBe("Fake")
        expect((yield* record).revisionId).toBe(c.id)
        // The Configuration itself still holds B's values: only the revision was rolled back.
        expect(expectData(yield* call("GET", `/namespaces/${ns}/configurations/${configuration.id}`), 200).values).toEqual(fakeModelValues(fake, "Fake B"))

        expectData(yield* call("POST", `${agentPath}/stop`), 202)
        yield* until(call("GET", agentPath), (r) => r.body.data?.activeRevisionId === undefined, 120)
      }), 20 * 60_000)
  })
})
