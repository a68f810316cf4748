/**
 * The `kubernetes` driver's Agent half against the real API server and controllers, with the
 * test node running each Pod's real OpenClaw gateway (testing/kubernetes/testNode.ts) answered by
 * a fake model server on loopback: the objects asserted field by field, redeploy in place, stop,
 * delete, re-adoption by a restarted driver, and the failures a start can end with.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Compute from "@svc/core/drivers/compute"
import { NamespaceId } from "@svc/core/schema"
import { Duration, Effect, Redacted } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { type FakeModelServer, startFakeModelServer } from "../../../testing/fakeModelServer.js"
import { ensureTestRuntime } from "../../../testing/gatewayRuntime.js"
import type { ClusterState } from "../../../testing/kubernetes/cluster.js"
import { clusterOf, kubernetesDriver, readObject } from "../../../testing/kubernetes/driver.js"
import { sharedCluster } from "../../../testing/kubernetes/shared.js"
import { startTestNode, type TestNode } from "../../../testing/kubernetes/testNode.js"

const GOOD_KEY = "sk-fake-good-0123456789"
const GATEWAY_TIMEOUT = 300_000

let state: ClusterState
let cluster: Compute.Cluster
let node: TestNode
let fake: FakeModelServer
let workDir: string
let driver: Compute.ComputeDriverShape
const owned = new Set<string>()
const namespace = { id: NamespaceId.make() }
const neverReadyAgent = "agt_never_ready"

const values = () => ({
  models: {
    providers: {
      fake: {
        baseUrl: fake.baseUrl,
        api: "openai-completions",
        apiKey: { source: "env", provider: "default", id: "FAKE_MODEL_KEY" },
        models: [{ id: fake.model, name: "Fake" }]
      }
    }
  },
  agents: { defaults: { model: `fake/${fake.model}` } },
  tools: { exec: { security: "full", ask: "off" } }
})

const spec = (agentId: string, revisionId: string, extra: Partial<Compute.GatewaySpec> = {}): Compute.GatewaySpec => ({
  namespaceId: namespace.id,
  agentId,
  revisionId,
  values: values(),
  env: { FAKE_MODEL_KEY: Redacted.make(GOOD_KEY) },
  ...extra
})

beforeAll(async () => {
  ;[state] = await Promise.all([sharedCluster(), ensureTestRuntime()])
  cluster = clusterOf(state)
  fake = await startFakeModelServer({ apiKey: GOOD_KEY })
  workDir = fs.mkdtempSync(path.join(os.tmpdir(), "svc-test-node-"))
  owned.add(Compute.kubernetesNamespace(namespace))
  node = await startTestNode(cluster, {
    name: `node-${namespace.id.slice(3, 11)}`,
    workDir,
    owns: (name) => owned.has(name),
    neverReady: (pod) => pod.labels["svc/agent-id"] === neverReadyAgent
  })
  driver = kubernetesDriver(state, { resolver: node.resolver, readinessTimeout: Duration.minutes(4) })
  await Effect.runPromise(driver.provisionNamespace(namespace))
}, 20 * 60_000)

afterAll(async () => {
  await Effect.runPromise(Effect.either(driver.teardownNamespace(namespace)))
  await node?.stop()
  await fake?.close()
  if (workDir !== undefined) fs.rmSync(workDir, { recursive: true, force: true })
}, 180_000)

const get = <T>(kind: "Deployment" | "Service" | "Secret" | "ConfigMap" | "PersistentVolumeClaim", name: string) =>
  Effect.promise(() =>
    readObject<T>(cluster, { apiVersion: kind === "Deployment" ? "apps/v1" : "v1", kind, namespace: Compute.kubernetesNamespace(namespace), name })
  )

interface DeploymentLike {
  spec: { replicas: number; strategy: unknown; selector: unknown; template: { metadata: { labels: Record<string, string> }; spec: Record<string, any> } }
}

describe("kubernetes Agent half with the test node", () => {
  it.live("deploys, adopts, redeploys in place, stops and deletes", () =>
    Effect.gen(function* () {
      const agentId = "agt_alpha"
      const name = Compute.agentObjectName(agentId)
      const ref = { namespaceId: namespace.id, agentId, revisionId: "rev_one" }
      yield* driver.startGateway(spec(agentId, "rev_one", { modelProbe: {} }))
      expect(yield* driver.gatewayHealth(ref)).toBe("healthy")

      const labels = {
        "app.kubernetes.io/managed-by": "svc",
        "app.kubernetes.io/component": "gateway",
        "svc/namespace-id": namespace.id,
        "svc/agent-id": agentId
      }
      const deployment = (yield* get<DeploymentLike>("Deployment", name))!
      // The scope label marks this test file's gateways (testing/kubernetes/driver.ts).
      const scope = { "svc/scope": expect.stringMatching(/^test-[0-9]+-[a-z0-9]+$/) }
      expect(deployment.metadata?.labels).toEqual({ ...labels, "svc/revision-id": "rev_one", ...scope })
      expect(deployment.spec.replicas).toBe(1)
      expect(deployment.spec.strategy).toEqual({ type: "Recreate" })
      expect(deployment.spec.selector).toEqual({ matchLabels: labels })
      expect(deployment.spec.template.metadata.labels).toEqual({ ...labels, "svc/revision-id": "rev_one", ...scope })
      const pod = deployment.spec.template.spec
      expect(pod.automountServiceAccountToken).toBe(false)
      expect(pod.enableServiceLinks).toBe(false)
      expect(pod.securityContext).toEqual({
        runAsNonRoot: true,
        runAsUser: 1000,
        runAsGroup: 1000,
        fsGroup: 1000,
        seccompProfile: { type: "RuntimeDefault" }
      })
      // The gateway, then the `pairing` container (kubernetes-pairing.test.ts asserts it field by field).
      expect(pod.containers.map((candidate: { name: string }) => candidate.name)).toEqual(["gateway", "pairing"])
      const container = pod.containers[0]
      expect(container.image).toBe("ghcr.io/openclaw/openclaw:2026.9.6")
      expect(container.args).toEqual(["gateway", "run", "--port", "18789", "--bind", "lan"])
      expect(container.securityContext).toEqual({
        runAsNonRoot: true,
        allowPrivilegeEscalation: false,
        readOnlyRootFilesystem: true,
        capabilities: { drop: ["ALL"] }
      })
      expect(container.resources).toEqual({ requests: { cpu: "250m", memory: "1Gi" }, limits: { cpu: "2", memory: "2Gi" } })
      expect(container.envFrom).toEqual([{ secretRef: { name } }])
      // No Secret value in the Deployment: only fixed, non-secret variables.
      expect(JSON.stringify(deployment)).not.toContain(GOOD_KEY)
      expect(container.env).toEqual(Compute.podEnvironment)
      expect(pod.volumes).toEqual([
        { name: "config", configMap: { name, defaultMode: 420 } },
        { name: "data", persistentVolumeClaim: { claimName: name } },
        { name: "tmp", emptyDir: {} }
      ])

      const secret = (yield* get<{ data: Record<string, string>; type: string }>("Secret", name))!
      expect(secret.type).toBe("Opaque")
      expect(Object.keys(secret.data).sort()).toEqual(["FAKE_MODEL_KEY", "OPENCLAW_GATEWAY_TOKEN"])
      expect(Buffer.from(secret.data.FAKE_MODEL_KEY!, "base64").toString()).toBe(GOOD_KEY)
      const token = Buffer.from(secret.data.OPENCLAW_GATEWAY_TOKEN!, "base64").toString()

      // The ConfigMap holds what `local` renders, listening on the Pod's network.
      const configMap = (yield* get<{ data: Record<string, string> }>("ConfigMap", name))!
      const expected = Compute.renderGatewayConfig(values(), { port: 18789, workspace: "/data/workspace", logFile: "/data/logs/openclaw.log" })
      expect(JSON.parse(configMap.data["openclaw.json"]!)).toEqual({ ...expected, gateway: { ...(expected.gateway as object), bind: "lan" } })
      expect(configMap.data["openclaw.json"]).not.toContain(GOOD_KEY)
      expect(JSON.parse(configMap.data["openclaw.json"]!)).toHaveProperty(["tools", "exec", "security"], "deny")

      const service = (yield* get<{ spec: Record<string, unknown> }>("Service", name))!
      expect(service.spec.type).toBe("ClusterIP")
      expect(service.spec.selector).toEqual(labels)
      expect(service.spec.ports).toEqual([{ name: "gateway", protocol: "TCP", port: 18789, targetPort: 18789 }])
      const volume = (yield* get<{ spec: Record<string, unknown> }>("PersistentVolumeClaim", name))!
      expect(volume.spec.accessModes).toEqual(["ReadWriteOnce"])
      expect(volume.spec.resources).toEqual({ requests: { storage: "1Gi" } })

      // A chat completion through the private endpoint.
      const endpoint = yield* driver.privateEndpoint(ref)
      expect(endpoint.token).toBe(token)
      const answer = yield* Effect.promise(async () => {
        const response = await fetch(`${endpoint.url}/v1/chat/completions`, {
          method: "POST",
          headers: { authorization: `Bearer ${endpoint.token}`, "content-type": "application/json" },
          body: JSON.stringify({ model: "openclaw", messages: [{ role: "user", content: "hello" }] })
        })
        return { status: response.status, body: (await response.json()) as { choices: Array<{ message: { content: string } }> } }
      })
      expect(answer.status).toBe(200)
      expect(answer.body.choices[0]!.message.content).toBe(fake.reply)
      expect(yield* driver.liveGateways).toContainEqual(ref)
      expect((yield* driver.diagnostics(ref)).map((check) => [check.name, check.status])).toEqual([
        ["deployment.available", "pass"],
        ["pod.phase", "pass"],
        ["pod.restarts", "pass"],
        ["gateway.ready", "pass"]
      ])

      // A restarted worker re-adopts: same Pod process, same token, nothing restarted.
      const before = [...node.processes().values()]
      expect(before).toHaveLength(1)
      const restarted = kubernetesDriver(state, { resolver: node.resolver, readinessTimeout: Duration.minutes(4) })
      yield* restarted.startGateway(spec(agentId, "rev_one"))
      expect([...node.processes().values()]).toEqual(before)
      expect(yield* restarted.privateEndpoint(ref)).toEqual(endpoint)

      // Redeploy: the same Deployment runs the new revision, with a new token; one gateway only.
      yield* restarted.startGateway(spec(agentId, "rev_two"))
      const redeployed = (yield* get<DeploymentLike>("Deployment", name))!
      expect(redeployed.metadata?.uid).toBe(deployment.metadata?.uid)
      expect(redeployed.spec.template.metadata.labels["svc/revision-id"]).toBe("rev_two")
      expect(node.processes().size).toBe(1)
      const second = { ...ref, revisionId: "rev_two" }
      expect(yield* restarted.gatewayHealth(second)).toBe("healthy")
      expect(yield* restarted.gatewayHealth(ref)).toBe("absent")
      expect((yield* restarted.privateEndpoint(second)).token).not.toBe(token)

      // Stop: zero replicas, no routing; the volume stays. Stopping again changes nothing.
      yield* restarted.stopGateway(second)
      expect((yield* get<DeploymentLike>("Deployment", name))!.spec.replicas).toBe(0)
      expect(yield* get("Service", name)).toBeUndefined()
      expect(yield* get("PersistentVolumeClaim", name)).toBeDefined()
      expect(yield* restarted.gatewayHealth(second)).toBe("stopped")
      expect(yield* restarted.liveGateways).not.toContainEqual(second)
      yield* restarted.stopGateway(second)
      expect(yield* Effect.flip(restarted.privateEndpoint(second))).toMatchObject({ code: "GATEWAY_NOT_RUNNING", permanent: false })

      // Delete: nothing of the Agent is left (the volume once its protection finalizer is
      // released by the controller manager); again is a no-op.
      yield* restarted.deleteGateway(second)
      for (const kind of ["Deployment", "Service", "Secret", "ConfigMap"] as const) {
        expect(yield* get(kind, name)).toBeUndefined()
      }
      const volumeGone = yield* Effect.promise(async () => {
        for (let attempt = 0; attempt < 120; attempt++) {
          if ((await readObject(cluster, { apiVersion: "v1", kind: "PersistentVolumeClaim", namespace: Compute.kubernetesNamespace(namespace), name })) === undefined) return true
          await new Promise((resolve) => setTimeout(resolve, 500))
        }
        return false
      })
      expect(volumeGone).toBe(true)
      expect(yield* restarted.gatewayHealth(second)).toBe("absent")
      yield* restarted.deleteGateway(second)
    }), GATEWAY_TIMEOUT * 2)

  it.live("initial workspace files reach the volume before the gateway runs, and never overwrite later edits", () =>
    Effect.gen(function* () {
      const agentId = "agt_files"
      const name = Compute.agentObjectName(agentId)
      const files = { "AGENTS.md": "# Be brief\n", "notes/today.md": "first\n" }
      // A name `local` refuses is skipped here too.
      yield* driver.startGateway(spec(agentId, "rev_one", { initialFiles: { ...files, "../escape.md": "x" } }))
      const placed = (yield* get<{ data: Record<string, string>; metadata: { labels: Record<string, string> } }>("ConfigMap", `${name}-files`))!
      expect(placed.data).toEqual({ "files.json": JSON.stringify(files) })
      const pod = (yield* get<DeploymentLike>("Deployment", name))!.spec.template.spec
      expect(pod.initContainers).toEqual([{
        name: "workspace-files",
        image: "ghcr.io/openclaw/openclaw:2026.9.6",
        command: ["node", "-e", expect.stringContaining("flag:'wx'")],
        env: [{ name: "SVC_FILES", value: "/etc/svc-files/files.json" }, { name: "SVC_WORKSPACE", value: "/data/workspace" }],
        resources: { requests: { cpu: "50m", memory: "64Mi" }, limits: { cpu: "500m", memory: "256Mi" } },
        securityContext: { runAsNonRoot: true, allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ["ALL"] } },
        volumeMounts: [{ name: "files", mountPath: "/etc/svc-files", readOnly: true }, { name: "data", mountPath: "/data" }],
        terminationMessagePath: "/dev/termination-log",
        terminationMessagePolicy: "File",
        imagePullPolicy: "IfNotPresent"
      }])
      expect(pod.volumes).toContainEqual({ name: "files", configMap: { name: `${name}-files`, defaultMode: 420 } })
      // On the Pod's volume (the test node's directory for the claim), as `local` writes them.
      const workspace = path.join(workDir, "volumes", Compute.kubernetesNamespace(namespace), name, "workspace")
      const read = (file: string) => fs.readFileSync(path.join(workspace, file), "utf8")
      expect([read("AGENTS.md"), read("notes/today.md")]).toEqual(["# Be brief\n", "first\n"])
      expect(fs.existsSync(path.join(workspace, "..", "escape.md"))).toBe(false)

      // The Agent edits a file; a later revision given files again creates only the missing ones.
      fs.writeFileSync(path.join(workspace, "AGENTS.md"), "# Edited by the Agent\n")
      yield* driver.startGateway(spec(agentId, "rev_two", { initialFiles: { "AGENTS.md": "# Replayed\n", "NEW.md": "new\n" } }))
      expect([read("AGENTS.md"), read("NEW.md")]).toEqual(["# Edited by the Agent\n", "new\n"])

      // A revision without files: no init container, no files ConfigMap; the workspace stays.
      yield* driver.startGateway(spec(agentId, "rev_three"))
      expect((yield* get<DeploymentLike>("Deployment", name))!.spec.template.spec.initContainers).toBeUndefined()
      expect(yield* get("ConfigMap", `${name}-files`)).toBeUndefined()
      expect(read("AGENTS.md")).toBe("# Edited by the Agent\n")
      yield* driver.deleteGateway({ namespaceId: namespace.id, agentId, revisionId: "rev_three" })
    }), GATEWAY_TIMEOUT * 2)

  it.live("a Pod that never becomes Ready ends the start with GATEWAY_START_TIMEOUT", () =>
    Effect.gen(function* () {
      const impatient = kubernetesDriver(state, { resolver: node.resolver, readinessTimeout: Duration.seconds(8) })
      const ref = { namespaceId: namespace.id, agentId: neverReadyAgent, revisionId: "rev_one" }
      const error = yield* Effect.flip(impatient.startGateway(spec(neverReadyAgent, "rev_one")))
      expect(error).toMatchObject({ _tag: "ComputeFailure", code: "GATEWAY_START_TIMEOUT", permanent: false })
      expect(yield* impatient.gatewayHealth(ref)).toBe("unhealthy")
      const checks = yield* impatient.diagnostics(ref)
      expect(checks.find((check) => check.name === "gateway.ready")?.status).toBe("fail")
      yield* impatient.deleteGateway(ref)
    }), 120_000)

  it.live("refuses reserved variable names and Namespaces not provisioned yet", () =>
    Effect.gen(function* () {
      const invalid = yield* Effect.flip(driver.startGateway(spec("agt_bad", "rev_one", { env: { OPENCLAW_STATE_DIR: Redacted.make("x") } })))
      expect(invalid).toMatchObject({ _tag: "ComputeFailure", code: "GATEWAY_SPEC_INVALID", permanent: true })
      const elsewhere = yield* Effect.flip(driver.startGateway({ ...spec("agt_bad", "rev_one"), namespaceId: NamespaceId.make() }))
      expect(elsewhere).toMatchObject({ _tag: "ComputeFailure", code: "NAMESPACE_RUNTIME_MISSING", permanent: false })
      expect(yield* driver.gatewayHealth({ namespaceId: NamespaceId.make(), agentId: "agt_bad", revisionId: "rev_one" })).toBe("absent")
      // No gateway runs this Agent: its files are not reachable (kubernetes-workspace.test.ts has the rest).
      const unread = yield* Effect.flip(driver.readWorkspaceFile({ namespaceId: namespace.id, agentId: "agt_bad", revisionId: "rev_one" }, "USER.md"))
      expect(unread._tag === "ComputeFailure" && { code: unread.code, permanent: unread.permanent }).toEqual({ code: "GATEWAY_NOT_RUNNING", permanent: false })
    }), 60_000)
})
