/**
 * Workspace files and diagnostics over the real API and the real `local` Compute Driver, without
 * starting a gateway (the real-gateway path is in agents-e2e.test.ts): every admission rule of
 * SPEC 4.4 with its status, reads from the Agent's real workspace directory, and diagnostics of
 * an Agent whose gateway is not running.
 */
import { describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { defaultInstallationConfig, InstallationConfiguration, type LoadedProcessConfig, ProcessConfiguration } from "@svc/core/config"
import * as Compute from "@svc/core/drivers/compute"
import { agentLayout, namespaceDirectory } from "@svc/core/drivers/compute"
import { BuiltinRoles } from "@svc/core/iam"
import { RevisionId } from "@svc/core/schema"
import { Effect, Layer } from "effect"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { bindRole, createServicePrincipal, insertServiceKey } from "../../../testing/identity.js"
import { call as rawCall, TestServer } from "../../../testing/server.js"
import { apiTestLayerWith, expectData, expectError, seedAdmin, seedNamespace, send, TIMESTAMP, withKey } from "./support/iamServer.js"

const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "svc-workspace-"))

const layer = apiTestLayerWith(Compute.layerFromConfiguration).pipe(
  Layer.provide(Layer.succeed(ProcessConfiguration, { dataDir, runtimeDir: path.join(dataDir, "no-runtime") } as unknown as LoadedProcessConfig)),
  Layer.provide(Layer.succeed(InstallationConfiguration, defaultInstallationConfig))
)

/** An Agent with a revision marked active (as a finished deployment leaves it), and its workspace dir. */
const deployedAgent = (label: string) =>
  Effect.gen(function* () {
    const { baseUrl } = yield* TestServer
    const sql = yield* SqlClient.SqlClient
    const admin = yield* seedAdmin(`ws-${label}@example.com`)
    const ns = yield* seedNamespace(`ws-${label}`)
    yield* Effect.promise(() => fs.mkdir(namespaceDirectory(dataDir, ns), { recursive: true, mode: 0o700 }))
    const configuration = expectData(yield* send(baseUrl, "POST", `/namespaces/${ns}/configurations`, admin.headers, { kind: "agent", values: {} }), 201)
    const agent = expectData(yield* send(baseUrl, "POST", `/namespaces/${ns}/agents`, admin.headers, {
      name: "bot",
      configurationId: configuration.id,
      harnessAuth: { method: "runtime" }
    }), 201)
    const revision = expectData(yield* send(baseUrl, "POST", `/namespaces/${ns}/agents/${agent.id}/deploy`, admin.headers), 202)
    yield* sql`UPDATE agents SET active_revision_id = ${revision.id} WHERE id = ${agent.id}`
    const workspace = agentLayout(namespaceDirectory(dataDir, ns), agent.id).workspace
    return { baseUrl, admin, ns, agent, revision, workspace, path: `/namespaces/${ns}/agents/${agent.id}` }
  })

describe("workspace files and diagnostics", () => {
  it.layer(layer, { timeout: 120_000 })((it) => {
    it.effect("reads come from the Agent's workspace; names, sizes and states are checked", () =>
      Effect.gen(function* () {
        const f = yield* deployedAgent("reads")
        const call = (method: string, p: string, body?: unknown) => send(f.baseUrl, method, `${f.path}${p}`, f.admin.headers, body)
        // No workspace on this host yet: the file does not exist... once the Agent never ran.
        const sql = yield* SqlClient.SqlClient
        yield* sql`UPDATE agents SET active_revision_id = NULL WHERE id = ${f.agent.id}`
        expectError(yield* call("GET", "/workspace/files/USER.md"), 404, "NOT_FOUND")
        yield* sql`UPDATE agents SET active_revision_id = ${f.revision.id} WHERE id = ${f.agent.id}`
        yield* Effect.promise(async () => {
          await fs.mkdir(f.workspace, { recursive: true, mode: 0o700 })
          await fs.writeFile(path.join(f.workspace, "SOUL.md"), "# Soul\nCalm. ✓\n")
        })
        expect(expectData(yield* call("GET", "/workspace/files/SOUL.md"), 200)).toEqual({ name: "SOUL.md", content: "# Soul\nCalm. ✓\n" })
        expectError(yield* call("GET", "/workspace/files/USER.md"), 404, "NOT_FOUND")
        expectError(yield* call("GET", "/workspace/files/secrets.env"), 400, "INVALID_REQUEST")
        expectError(yield* call("GET", "/workspace/files/..%2Fgateway.json"), 400, "INVALID_REQUEST")
      }))

    it.effect("writes: body and content limits, state rules, permissions; nothing is written when refused", () =>
      Effect.gen(function* () {
        const f = yield* deployedAgent("writes")
        const put = (body: unknown, headers = f.admin.headers, name = "USER.md") =>
          send(f.baseUrl, "PUT", `${f.path}/workspace/files/${name}`, headers, body)
        expectError(yield* put({ content: "x".repeat(16_385) }), 400, "INVALID_REQUEST", [{ code: "TOO_LONG", path: "/content" }])
        // 16 KiB is counted in UTF-8 bytes: 5462 three-byte characters are 16386 bytes.
        expectError(yield* put({ content: "✓".repeat(5462) }), 400, "INVALID_REQUEST", [{ code: "TOO_LONG", path: "/content" }])
        expectError(yield* put({ content: "a\u0000b" }), 400, "INVALID_REQUEST", [{ code: "INVALID_FORMAT", path: "/content" }])
        expectError(yield* put({ content: "\ud800" }), 400, "INVALID_REQUEST", [{ code: "INVALID_FORMAT", path: "/content" }])
        expectError(yield* put({ content: "x", extra: 1 }), 400, "INVALID_REQUEST", [{ code: "UNKNOWN_FIELD", path: "/extra" }])
        expectError(yield* put({}), 400, "INVALID_REQUEST", [{ code: "REQUIRED", path: "/content" }])
        expectError(yield* put({ content: "x" }, f.admin.headers, "NOTES.md"), 400, "INVALID_REQUEST")
        // The body limit is 48 KiB, whatever the content (here: JSON escapes of a short text).
        const oversized = JSON.stringify({ content: "\\u0041".repeat(1) + " ".repeat(49 * 1024) })
        const tooLarge = yield* Effect.promise(() => rawCall(`${f.baseUrl}${f.path}/workspace/files/USER.md`, {
          method: "PUT",
          headers: { ...f.admin.headers, "content-type": "application/json" },
          body: oversized
        }))
        expectError(tooLarge, 413, "PAYLOAD_TOO_LARGE")
        // The gateway is not running: the write cannot be made.
        expectError(yield* put({ content: "# User\n" }), 503, "DEPENDENCY_UNAVAILABLE")
        // Stopping (desired stopped, the revision still active): 409.
        expectData(yield* send(f.baseUrl, "POST", `${f.path}/stop`, f.admin.headers), 202)
        expectError(yield* put({ content: "# User\n" }), 409, "RESOURCE_CONFLICT")
        // Never deployed: 409; deleting: 409 AGENT_DELETING.
        const sql = yield* SqlClient.SqlClient
        yield* sql`UPDATE agents SET active_revision_id = NULL WHERE id = ${f.agent.id}`
        expectError(yield* put({ content: "# User\n" }), 409, "RESOURCE_CONFLICT")
        // A viewer may read but not write.
        const viewer = yield* createServicePrincipal("ws-viewer", f.ns)
        yield* bindRole(viewer, BuiltinRoles.namespaceViewer.id, { kind: "namespace", id: f.ns })
        const viewerKey = withKey((yield* insertServiceKey(viewer, { namespaceId: f.ns })).key)
        expectError(yield* put({ content: "# User\n" }, viewerKey), 403, "FORBIDDEN")
        expectData(yield* send(f.baseUrl, "DELETE", f.path, f.admin.headers), 202)
        expectError(yield* put({ content: "# User\n" }), 409, "AGENT_DELETING")
        const written = yield* sql`SELECT 1 FROM audit_events WHERE kind = 'agent.workspace-file-written'`
        expect(written).toHaveLength(0)
        expect(yield* Effect.promise(() => fs.stat(path.join(f.workspace, "USER.md")).then(() => true, () => false))).toBe(false)
      }))

    it.effect("diagnostics: the active revision only; a stopped gateway reports failed checks, live", () =>
      Effect.gen(function* () {
        const f = yield* deployedAgent("diagnostics")
        const result = expectData(yield* send(f.baseUrl, "POST", `${f.path}/deployments/${f.revision.id}/diagnostics`, f.admin.headers), 200)
        expect(result).toEqual({
          revisionId: f.revision.id,
          observedAt: expect.stringMatching(TIMESTAMP),
          checks: [
            { component: "runtime", check: "installed", state: "failed", checkedAt: expect.stringMatching(TIMESTAMP), code: "RUNTIME_INSTALLED" },
            { component: "gateway", check: "process", state: "failed", checkedAt: expect.stringMatching(TIMESTAMP), code: "GATEWAY_PROCESS" },
            { component: "gateway", check: "live", state: "failed", checkedAt: expect.stringMatching(TIMESTAMP), code: "GATEWAY_LIVE" },
            { component: "gateway", check: "ready", state: "failed", checkedAt: expect.stringMatching(TIMESTAMP), code: "GATEWAY_READY" }
          ]
        })
        const sql = yield* SqlClient.SqlClient
        // Nothing is stored.
        expect(yield* sql`SELECT 1 FROM audit_events WHERE kind LIKE 'agent.diagnostics%'`).toHaveLength(0)
        expectError(yield* send(f.baseUrl, "POST", `${f.path}/deployments/${RevisionId.make()}/diagnostics`, f.admin.headers), 404, "NOT_FOUND")
        const second = expectData(yield* send(f.baseUrl, "POST", `${f.path}/deploy`, f.admin.headers), 202)
        // A revision that is not the active one: 409.
        expectError(yield* send(f.baseUrl, "POST", `${f.path}/deployments/${second.id}/diagnostics`, f.admin.headers), 409, "RESOURCE_CONFLICT")
      }))
  })
})
