/**
 * The Compute Driver contract (testing/computeContract.ts) against both implementations:
 * `local` (a child process on this host) and `kubernetes` (the run's shared real API server with
 * the test node running the Pod's gateway).
 */
import { afterAll, beforeAll, describe } from "@effect/vitest"
import * as Compute from "@svc/core/drivers/compute"
import { NamespaceId } from "@svc/core/schema"
import { Duration, Effect } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { CONTRACT_KEY, computeContract, type ContractSubject } from "../../../testing/computeContract.js"
import { type FakeModelServer, startFakeModelServer } from "../../../testing/fakeModelServer.js"
import { ensureTestRuntime, testRuntimeRoot } from "../../../testing/gatewayRuntime.js"
import { clusterOf, kubernetesDriver } from "../../../testing/kubernetes/driver.js"
import { sharedCluster } from "../../../testing/kubernetes/shared.js"
import { startTestNode, type TestNode } from "../../../testing/kubernetes/testNode.js"

const TIMEOUT = 300_000
let fake: FakeModelServer

beforeAll(async () => {
  await ensureTestRuntime()
  fake = await startFakeModelServer({ apiKey: CONTRACT_KEY })
}, 20 * 60_000)

afterAll(async () => {
  await fake?.close()
})

describe("Compute Driver contract: local", () => {
  let subject: ContractSubject
  let dataDir: string
  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "svc-contract-"))
    const make = () => Compute.makeLocalCompute(dataDir, { runtimeRoot: testRuntimeRoot(), readinessTimeout: Duration.minutes(4) })
    const namespace = { id: NamespaceId.make() }
    subject = { namespace, driver: make(), restarted: make, fake }
    await Effect.runPromise(subject.driver.provisionNamespace(namespace))
  })
  afterAll(async () => {
    await Effect.runPromise(Effect.either(subject.driver.teardownNamespace(subject.namespace)))
    fs.rmSync(dataDir, { recursive: true, force: true })
  })
  computeContract(() => subject, TIMEOUT)
})

describe("Compute Driver contract: kubernetes", () => {
  let subject: ContractSubject
  let node: TestNode
  let workDir: string
  beforeAll(async () => {
    const state = await sharedCluster()
    const namespace = { id: NamespaceId.make() }
    workDir = fs.mkdtempSync(path.join(os.tmpdir(), "svc-contract-node-"))
    node = await startTestNode(clusterOf(state), {
      name: `node-${namespace.id.slice(3, 11)}`,
      workDir,
      owns: (name) => name === Compute.kubernetesNamespace(namespace)
    })
    const make = () => kubernetesDriver(state, { resolver: node.resolver, readinessTimeout: Duration.minutes(4) })
    subject = { namespace, driver: make(), restarted: make, fake }
    await Effect.runPromise(subject.driver.provisionNamespace(namespace))
  }, 180_000)
  afterAll(async () => {
    await Effect.runPromise(Effect.either(subject.driver.teardownNamespace(subject.namespace)))
    await node?.stop()
    fs.rmSync(workDir, { recursive: true, force: true })
  }, 180_000)
  computeContract(() => subject, TIMEOUT)
})
