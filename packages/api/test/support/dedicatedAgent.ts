/**
 * What the dedicated-execution suites on the `kubernetes` Compute Driver share: a dedicated Agent
 * set up through the API, a deployment run to its end, and the checks that the harness
 * credentials reach only the `harness` container (its Secret, its process) and never the
 * gateway's (its Secret, its container spec, its process's environment).
 */
import * as Compute from "@svc/core/drivers/compute"
import { NamespaceId } from "@svc/core/schema"
import { expect } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { SqlClient } from "@effect/sql"
import * as fs from "node:fs"
import * as path from "node:path"
import { LogCapture } from "../../../../testing/server.js"
import type { FakeModelServer } from "../../../../testing/fakeModelServer.js"
import { until, workItemProgress } from "../../../../testing/poll.js"
import { expectData, type Result } from "./iamServer.js"
import type { KubernetesTestNode } from "./kubernetesTestNode.js"
import { fakeModelValues } from "./modelAgent.js"

export type Call = (method: string, path: string, body?: unknown) => Effect.Effect<Result>

interface Container {
  name: string
  image: string
  args?: Array<string>
  env?: Array<{ name: string; value?: string }>
  envFrom?: Array<{ secretRef?: { name: string } }>
  resources?: unknown
  securityContext?: unknown
  volumeMounts?: unknown
  ports?: unknown
}
export interface PodTemplate {
  spec: { template: { spec: { automountServiceAccountToken?: boolean; shareProcessNamespace?: boolean; containers: Array<Container> } } }
}

/** A ready Namespace, its Kubernetes namespace run by the file's node. */
export const dedicatedNamespace = (call: Call, node: KubernetesTestNode, name: string) =>
  Effect.gen(function* () {
    const ns = expectData(yield* call("POST", "/namespaces", { name }), 201).id as string
    const kns = Compute.kubernetesNamespace({ id: Schema.decodeSync(NamespaceId)(ns) })
    node.owned.add(kns)
    yield* until(call("GET", `/namespaces/${ns}`), (r) => r.body.data?.status === "ready", 60)
    return { ns, kns }
  })

/** A Configuration of the Namespace whose model provider is `fake`. */
export const fakeConfiguration = (call: Call, ns: string, fake: FakeModelServer) =>
  Effect.map(
    call("POST", `/namespaces/${ns}/configurations`, { kind: "agent", values: fakeModelValues(fake) }),
    (result) => expectData(result, 201).id as string
  )

/** Deploys and waits for the deployment's terminal status. */
export const deployToEnd = (call: Call, agentPath: string) =>
  Effect.gen(function* () {
    const revision = expectData(yield* call("POST", `${agentPath}/deploy`), 202).id as string
    return expectData(
      yield* until(
        call("GET", `${agentPath}/deployments/${revision}`),
        (r) => r.body.data?.status === "succeeded" || r.body.data?.status === "failed",
        { progress: workItemProgress(revision) }
      ),
      200
    ) as { deploymentId: string; status: string; error?: { code: string; message: string } }
  })

const decode = (data: Record<string, string> | undefined) =>
  Object.fromEntries(Object.entries(data ?? {}).map(([key, value]) => [key, Buffer.from(value, "base64").toString("utf8")]))

/** The environment of a live process of this host. */
const environOf = (pid: number | undefined): ReadonlyArray<string> => {
  expect(pid).toBeDefined()
  return fs.readFileSync(`/proc/${pid}/environ`, "utf8").split("\0").filter((entry) => entry !== "")
}

/**
 * The harness holds exactly `harnessData` (its Secret, its process), the gateway none of its
 * values: its Secret, its container's spec and its process's environment. Returns the two
 * containers of the Pod template for the caller's own checks.
 */
export const expectHarnessOnly = (node: KubernetesTestNode, kns: string, agentId: string, harnessData: Record<string, string>) =>
  Effect.gen(function* () {
    const name = Compute.agentObjectName(agentId)
    const secrets = Object.values(harnessData)
    const gatewaySecret = decode((yield* node.object<{ data?: Record<string, string> }>("Secret", kns, name))?.data)
    expect(Object.keys(gatewaySecret)).toEqual([Compute.TOKEN_VARIABLE])
    const harnessSecret = decode((yield* node.object<{ data?: Record<string, string> }>("Secret", kns, `${name}-harness`))?.data)
    expect(harnessSecret).toEqual(harnessData)

    const deployment = (yield* node.object<PodTemplate>("Deployment", kns, name))!
    const pod = deployment.spec.template.spec
    expect(pod.containers.map((container) => container.name)).toEqual(["gateway", "harness", "pairing"])
    const [gateway, harness] = pod.containers as [Container, Container]
    expect(gateway.envFrom).toEqual([{ secretRef: { name } }])
    expect(harness.envFrom).toEqual([{ secretRef: { name: `${name}-harness` } }])
    const specText = JSON.stringify(deployment)
    for (const value of secrets) expect(specText).not.toContain(value)

    const processes = [...node.node().processes()].filter(([pod]) => pod.startsWith(`${name}-`)).map(([, entry]) => entry)
    expect(processes).toHaveLength(1)
    const gatewayEnv = environOf(processes[0]!.pid)
    const harnessEnv = environOf(processes[0]!.harnessPid)
    for (const value of secrets) {
      expect(gatewayEnv.some((entry) => entry.includes(value))).toBe(false)
    }
    for (const [key, value] of Object.entries(harnessData)) expect(harnessEnv).toContain(`${key}=${value}`)
    expect(harnessEnv.some((entry) => entry.startsWith(`${Compute.TOKEN_VARIABLE}=`))).toBe(false)
    // The pairing container holds the gateway token alone: no harness credential.
    const pairingEnv = environOf(processes[0]!.pairingPid)
    for (const value of secrets) expect(pairingEnv.some((entry) => entry.includes(value))).toBe(false)
    expect(pairingEnv.some((entry) => entry.startsWith(`${Compute.TOKEN_VARIABLE}=`))).toBe(true)
    return { gateway, harness, pod, gatewayEnv, harnessEnv }
  })

/**
 * No credential value in the service's logs, audit rows or revision snapshots, nor in what the
 * test node's containers logged (the gateways' and the harnesses' output).
 */
export const expectNoCredentialIn = (node: KubernetesTestNode, values: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const logs = yield* LogCapture
    const audit = yield* sql<{ row: string }>`SELECT row_to_json(a)::text AS row FROM audit_events a`
    const revisions = yield* sql<{ row: string }>`SELECT snapshot::text AS row FROM agent_revisions`
    const containerLogs = fs.readdirSync(node.nodeDir()).filter((file) => file.endsWith(".log"))
    expect(containerLogs.some((file) => file.endsWith(".harness.log"))).toBe(true)
    const haystacks = [
      ...logs.entries.map((entry) => JSON.stringify(entry)),
      ...audit.map((row) => row.row),
      ...revisions.map((row) => row.row),
      ...containerLogs.map((file) => fs.readFileSync(path.join(node.nodeDir(), file), "utf8"))
    ]
    for (const haystack of haystacks) for (const value of values) expect(haystack.includes(value)).toBe(false)
  })
