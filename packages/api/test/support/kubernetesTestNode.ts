/**
 * One `kubernetes` Compute Driver for a test file's API and worker, over the run's shared cluster,
 * with the file's own test node running its Pods (testing/kubernetes/testNode.ts) and reaching
 * their gateways on loopback. The node binds only the Kubernetes namespaces the file adds to
 * `owned`; Agents in `neverReady` get Pods that never become Ready.
 */
import * as Compute from "@svc/core/drivers/compute"
import { Duration, Effect, Layer } from "effect"
import { randomBytes } from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { clusterOf, kubernetesDriver, readObject } from "../../../../testing/kubernetes/driver.js"
import { sharedCluster } from "../../../../testing/kubernetes/shared.js"
import { startTestNode, type TestNode } from "../../../../testing/kubernetes/testNode.js"

export interface KubernetesTestNode {
  readonly layer: Layer.Layer<Compute.ComputeDriver>
  /** Kubernetes namespaces whose Pods this file's node runs. */
  readonly owned: Set<string>
  /** Agent ids whose Pods are never run (they stay Running, never Ready). */
  readonly neverReady: Set<string>
  readonly cluster: () => Compute.Cluster
  readonly node: () => TestNode
  /** The node's directory: each volume claim is `volumes/<namespace>/<claim>` there. */
  readonly nodeDir: () => string
  /** An object of the cluster, or `undefined` when absent. */
  readonly object: <T>(kind: string, namespace: string | undefined, name: string) => Effect.Effect<(T & { metadata?: { uid?: string; labels?: Record<string, string> } }) | undefined>
}

const required = <A>(value: A | undefined): A => {
  if (value === undefined) throw new Error("the test node starts with the file's layer")
  return value
}

export const kubernetesTestNode = (prefix: string, settings: Partial<Compute.KubernetesSettings> = {}): KubernetesTestNode => {
  const owned = new Set<string>()
  const neverReady = new Set<string>()
  let cluster: Compute.Cluster | undefined
  let node: TestNode | undefined
  let nodeDir: string | undefined
  const layer = Layer.scoped(
    Compute.ComputeDriver,
    Effect.acquireRelease(
      Effect.promise(async () => {
        const state = await sharedCluster()
        cluster = clusterOf(state)
        const workDir = fs.mkdtempSync(path.join(os.tmpdir(), `svc-${prefix}-node-`))
        nodeDir = workDir
        node = await startTestNode(cluster, {
          name: `node-${prefix}-${randomBytes(4).toString("hex")}`,
          workDir,
          owns: (name) => owned.has(name),
          neverReady: (pod) => neverReady.has(pod.labels["svc/agent-id"] ?? "")
        })
        return { node, workDir, driver: kubernetesDriver(state, { resolver: node.resolver, readinessTimeout: Duration.seconds(90) }, settings) }
      }),
      ({ node, workDir }) => Effect.promise(async () => {
        await node.stop()
        fs.rmSync(workDir, { recursive: true, force: true })
      })
    ).pipe(Effect.map(({ driver }) => driver))
  )
  return {
    layer,
    owned,
    neverReady,
    cluster: () => required(cluster),
    node: () => required(node),
    nodeDir: () => required(nodeDir),
    object: <T>(kind: string, namespace: string | undefined, name: string) =>
      Effect.promise(() =>
        readObject<T>(required(cluster), {
          apiVersion: kind === "Deployment" ? "apps/v1" : "v1",
          kind,
          name,
          ...(namespace === undefined ? {} : { namespace })
        })
      )
  }
}
