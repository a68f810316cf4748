/**
 * Device pairing on `kubernetes` (docs/decisions/kubernetes.md "Device pairing"): the service
 * reaches the gateway as a cluster client does (`clusterClientHeaders`, so the real gateway
 * treats it as remote and answers `NOT_PAIRED` to a new device), and the Pod's `pairing`
 * container (`svc gateway-pairing`, run by the test node) approves the service's device and only
 * it. Without the approver a workspace call is 503 with the service's request left pending.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Compute from "@svc/core/drivers/compute"
import { NamespaceId } from "@svc/core/schema"
import type { V1Deployment } from "@kubernetes/client-node"
import { Duration, Effect, Schedule } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { ensureTestRuntime } from "../../../testing/gatewayRuntime.js"
import type { ClusterState } from "../../../testing/kubernetes/cluster.js"
import { clusterOf, kubernetesDriver, readObject, clusterClientHeaders, testServiceDevice } from "../../../testing/kubernetes/driver.js"
import { sharedCluster } from "../../../testing/kubernetes/shared.js"
import { startTestNode, type TestNode } from "../../../testing/kubernetes/testNode.js"

let state: ClusterState
let node: TestNode
let workDir: string
let driver: Compute.ComputeDriverShape
const owned = new Set<string>()
const namespace = { id: NamespaceId.make() }
const agentId = "agt_pairing"
const ref = { namespaceId: namespace.id, agentId, revisionId: "rev_pairing" }
const name = Compute.agentObjectName(agentId)
const k8sNamespace = Compute.kubernetesNamespace(namespace)
const remoteHeaders = clusterClientHeaders({ namespace: k8sNamespace, service: name, port: Compute.GATEWAY_PORT })

beforeAll(async () => {
  ;[state] = await Promise.all([sharedCluster(), ensureTestRuntime()])
  workDir = fs.mkdtempSync(path.join(os.tmpdir(), "svc-test-node-pair-"))
  owned.add(k8sNamespace)
  node = await startTestNode(clusterOf(state), { name: `node-pair-${namespace.id.slice(3, 11)}`, workDir, owns: (ns) => owned.has(ns) })
  driver = kubernetesDriver(state, { resolver: node.resolver, readinessTimeout: Duration.minutes(4) })
  await Effect.runPromise(driver.provisionNamespace(namespace))
  await Effect.runPromise(driver.startGateway({ ...ref, values: {}, env: {}, initialFiles: { "SOUL.md": "# Soul\n" } }))
}, 20 * 60_000)

afterAll(async () => {
  if (driver !== undefined) await Effect.runPromise(Effect.either(driver.teardownNamespace(namespace)))
  await node?.stop()
  if (workDir !== undefined) fs.rmSync(workDir, { recursive: true, force: true })
}, 180_000)

const bytes = (value: string) => new TextEncoder().encode(value)
const text = (value: Uint8Array) => new TextDecoder().decode(value)

interface Listed {
  readonly pending: ReadonlyArray<{ readonly requestId: string; readonly deviceId: string; readonly scopes?: ReadonlyArray<string> }>
  readonly paired: ReadonlyArray<{ readonly deviceId: string; readonly scopes?: ReadonlyArray<string> }>
}

/** The gateway's pairing state, asked by a local admin client (loopback, local Host: paired silently). */
const asLocalAdmin = <A>(use: (session: Compute.GatewaySession) => Effect.Effect<A, Compute.GatewayRpcError>) =>
  Effect.scoped(
    Effect.gen(function* () {
      const endpoint = yield* driver.privateEndpoint(ref).pipe(Effect.orDie)
      const session = yield* Compute.gatewaySession(endpoint, { scopes: ["operator.read", "operator.pairing", "operator.admin"] })
      return yield* use(session)
    })
  )

const pairingState = asLocalAdmin((session) =>
  session.call("device.pair.list", {}).pipe(Effect.map((answer) => {
    expect(answer.ok).toBe(true)
    return answer.payload as Listed
  })))

/** A connect as a cluster client (`clusterClientHeaders`) with `device`: its error code, or "ok". */
const remoteConnect = (device: Compute.DeviceIdentity) =>
  Effect.scoped(
    Effect.gen(function* () {
      const endpoint = yield* driver.privateEndpoint(ref).pipe(Effect.orDie)
      yield* Compute.gatewaySession({ ...endpoint, headers: remoteHeaders }, { scopes: ["operator.read"], device })
      return "ok"
    })
  ).pipe(Effect.catchTag("GatewayRpcError", (error) => Effect.succeed(error.code ?? error.reason)))

describe("kubernetes device pairing", () => {
  it.live("the Pod's pairing container, field by field", () =>
    Effect.gen(function* () {
      const deployment = yield* Effect.promise(() =>
        readObject<V1Deployment>(clusterOf(state), { apiVersion: "apps/v1", kind: "Deployment", name, namespace: k8sNamespace }))
      const containers = deployment?.spec?.template.spec?.containers ?? []
      expect(containers.map((container) => container.name)).toEqual(["gateway", "pairing"])
      expect(containers[1]).toEqual({
        name: "pairing",
        image: "ghcr.io/svc/svc:0.1.0",
        args: ["gateway-pairing"],
        env: [
          { name: "SVC_PAIRING_GATEWAY", value: "http://127.0.0.1:18789" },
          { name: "SVC_PAIRING_DEVICE_ID", value: testServiceDevice.id },
          { name: "SVC_PAIRING_SCOPES", value: "operator.read,operator.admin" },
          { name: "OPENCLAW_GATEWAY_TOKEN", valueFrom: { secretKeyRef: { name, key: "OPENCLAW_GATEWAY_TOKEN" } } }
        ],
        resources: { requests: { cpu: "10m", memory: "32Mi" }, limits: { cpu: "100m", memory: "128Mi" } },
        terminationMessagePath: "/dev/termination-log",
        terminationMessagePolicy: "File",
        imagePullPolicy: "IfNotPresent",
        securityContext: {
          runAsNonRoot: true,
          runAsUser: 1002,
          runAsGroup: 1002,
          allowPrivilegeEscalation: false,
          readOnlyRootFilesystem: true,
          capabilities: { drop: ["ALL"] },
          seccompProfile: { type: "RuntimeDefault" }
        }
      })
      // The device id is the public key's SHA-256: nothing secret in the Pod spec.
      expect(testServiceDevice.id).toMatch(/^[0-9a-f]{64}$/)
    }), 60_000)

  it.live("remote, with the approver: reads and writes succeed and the approved device is exactly the service's", () =>
    Effect.gen(function* () {
      yield* driver.writeWorkspaceFile(ref, "USER.md", bytes("# User\npaired\n"))
      expect(text(yield* driver.readWorkspaceFile(ref, "USER.md"))).toBe("# User\npaired\n")
      const listed = yield* pairingState
      const service = listed.paired.filter((device) => device.deviceId === testServiceDevice.id)
      expect(service).toHaveLength(1)
      expect([...(service[0]?.scopes ?? [])].sort()).toEqual(["operator.admin", "operator.read"])
      expect(listed.pending.filter((request) => request.deviceId === testServiceDevice.id)).toEqual([])
    }), 180_000)

  it.live("a different device key connecting remotely stays NOT_PAIRED while the approver serves the service", () =>
    Effect.gen(function* () {
      const stranger = Compute.makeDeviceIdentity()
      expect(yield* remoteConnect(stranger)).toBe("NOT_PAIRED")
      expect((yield* pairingState).pending.map((request) => request.deviceId)).toContain(stranger.id)
      // The service's pairing removed: the approver must pass over the pending list again to approve it anew.
      const removed = yield* asLocalAdmin((session) => session.call("device.pair.remove", { deviceId: testServiceDevice.id }))
      expect(removed.ok).toBe(true)
      expect(text(yield* driver.readWorkspaceFile(ref, "USER.md"))).toBe("# User\npaired\n")
      const listed = yield* pairingState
      expect(listed.paired.map((device) => device.deviceId)).toContain(testServiceDevice.id)
      expect(listed.paired.map((device) => device.deviceId)).not.toContain(stranger.id)
      expect(listed.pending.map((request) => request.deviceId)).toContain(stranger.id)
      expect(yield* remoteConnect(stranger)).toBe("NOT_PAIRED")
      // The service's own device, remote, is now paired.
      expect(yield* remoteConnect(testServiceDevice)).toBe("ok")
    }), 180_000)

  it.live("without the approver: the read is 503 (WORKSPACE_UNAVAILABLE) and the service's request stays pending", () =>
    Effect.gen(function* () {
      const pid = [...node.processes().values()][0]?.pairingPid
      expect(pid).toBeTypeOf("number")
      process.kill(-pid!, "SIGKILL")
      // Gone when signal 0 can no longer reach it.
      yield* Effect.try(() => process.kill(pid!, 0)).pipe(Effect.flip, Effect.retry(Schedule.spaced(Duration.millis(200))), Effect.timeout(Duration.seconds(30)))
      const removed = yield* asLocalAdmin((session) => session.call("device.pair.remove", { deviceId: testServiceDevice.id }))
      expect(removed.ok).toBe(true)
      const waiting = kubernetesDriver(state, { resolver: node.resolver, pairingWait: Duration.seconds(3) })
      expect(yield* Effect.flip(waiting.readWorkspaceFile(ref, "USER.md"))).toMatchObject({ _tag: "ComputeFailure", code: "WORKSPACE_UNAVAILABLE", permanent: false })
      expect(yield* Effect.flip(waiting.writeWorkspaceFile(ref, "USER.md", bytes("lost")))).toMatchObject({ _tag: "ComputeFailure", code: "WORKSPACE_UNAVAILABLE", permanent: true })
      const listed = yield* pairingState
      expect(listed.paired.map((device) => device.deviceId)).not.toContain(testServiceDevice.id)
      expect(listed.pending.map((request) => request.deviceId)).toContain(testServiceDevice.id)
      expect(fs.readFileSync(path.join(workDir, "volumes", k8sNamespace, name, "workspace", "USER.md"), "utf8")).toBe("# User\npaired\n")
    }), 180_000)
})
