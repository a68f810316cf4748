/**
 * Repository client material on the `kubernetes` Compute Driver, end to end below the API: the
 * worker opens a session through the real credential service and writes the revision's Secret on
 * the real API server; the driver starts the revision's gateway, which the test node runs as a
 * real OpenClaw process with the Secret projected into its Pod's volume (0440). The real `git`
 * CLI, given exactly the repository variables of that gateway process's environment, clones and
 * pushes an allowed ref through the credential service's listener, and is refused (403) outside
 * `pushRefAllowlist`. Retiring the Agent's sessions deletes the Secret and closes the session
 * (the bearer is refused, 401). Without `repositoryListenerUrl` a deployment with grants fails
 * NOT_IMPLEMENTED, permanently, saying what to configure, and opens no session.
 */
import { AgentRepositorySessionsRepo } from "@svc/core/db"
import * as Compute from "@svc/core/drivers/compute"
import * as Kubernetes from "@svc/core/drivers/compute/kubernetes"
import { Duration, Effect, Either, Redacted } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { type HarnessCompute, namespaceId, repositoryHarness } from "./repositoryHarness.js"
import { frozenGrant, NS_A } from "../../../testing/credentialService.js"
import { ensureTestRuntime } from "../../../testing/gatewayRuntime.js"
import type { ClusterState } from "../../../testing/kubernetes/cluster.js"
import { clusterOf, kubernetesDriver, readObject } from "../../../testing/kubernetes/driver.js"
import { sharedCluster } from "../../../testing/kubernetes/shared.js"
import { startTestNode, type TestNode } from "../../../testing/kubernetes/testNode.js"
import { processEnvironment, runWith } from "../../../testing/repositoryWorld.js"
import { WorkFailure } from "../src/engine/failure.js"
import { ensureRevisionSessions, retireAgentSessions } from "../src/index.js"
import { repositoryEnvironment } from "../src/repositories/sessions.js"

const REPOSITORY_VARIABLES = ["GIT_CONFIG_GLOBAL", "GIT_TERMINAL_PROMPT", "GH_CONFIG_DIR", "GH_HOST", "GH_NO_UPDATE_NOTIFIER"]

let state: ClusterState
let node: TestNode | undefined
let workDir = ""
let compute: Compute.ComputeDriverShape

const kubernetes: HarnessCompute = {
  start: async (world) => {
    ;[state] = await Promise.all([sharedCluster(), ensureTestRuntime()])
    workDir = fs.mkdtempSync(path.join(os.tmpdir(), "svc-test-node-repo-"))
    const owned = Compute.kubernetesNamespace({ id: namespaceId })
    node = await startTestNode(clusterOf(state), { name: `node-repo-${process.pid}`, workDir, owns: (name) => name === owned })
    // On this test node a Pod's processes reach the listener where the service does: on loopback.
    compute = kubernetesDriver(state, { resolver: node.resolver, readinessTimeout: Duration.minutes(5) }, {
      repositoryListenerUrl: world.service().listenerUrl
    })
    return compute
  },
  close: async () => {
    await node?.stop()
    if (workDir !== "") fs.rmSync(workDir, { recursive: true, force: true })
  }
}

const harness = repositoryHarness(undefined, kubernetes)
const { run, listener } = harness

const newRef = (): Compute.GatewayRef => ({ namespaceId, agentId: `agt_${crypto.randomUUID()}`, revisionId: `rev_${crypto.randomUUID()}` })
const grant = (profile: "git-read" | "git-write") => ({ ...frozenGrant(harness.world().registry, NS_A, "widgets", profile), namespaceId })

describe("repository client material on the kubernetes Compute Driver", () => {
  it("the gateway Pod's own environment and mounted material clone and push through the credential service; retired, the Secret goes and the bearer is refused", async () => {
    const ref = newRef()
    expect(await run(ensureRevisionSessions(ref, [grant("git-write")], 1))).toEqual(Either.right(undefined))
    const secretName = Compute.repositoriesObjectName(ref)
    const k8sNamespace = Compute.kubernetesNamespace({ id: namespaceId })
    const secretRef = { apiVersion: "v1", kind: "Secret", namespace: k8sNamespace, name: secretName }
    expect(await readObject(clusterOf(state), secretRef)).toBeDefined()

    // As the deployment does: the driver's environment, passed with the revision's start.
    const variables = Either.getOrThrow(await run(repositoryEnvironment(ref)))
    expect(Object.keys(variables)).toEqual(REPOSITORY_VARIABLES)
    const env = Object.fromEntries(Object.entries(variables).map(([name, value]) => [name, Redacted.make(value)]))
    expect(await Effect.runPromise(Effect.either(compute.startGateway({ ...ref, values: {}, env })))).toEqual(Either.right(undefined))

    // The gateway process the test node runs for the (started, so ready) Pod: its environment, on this node's paths.
    const pids = [...node!.processes().values()].flatMap((entry) => (entry.ready && entry.pid !== undefined ? [entry.pid] : []))
    expect(pids.length).toBe(1)
    const gatewayEnv = processEnvironment(pids[0]!)
    const material = path.dirname(gatewayEnv.GIT_CONFIG_GLOBAL!)
    expect(material.startsWith(path.join(workDir, "pods"))).toBe(true)
    expect(path.basename(material)).toBe("repositories")
    expect(gatewayEnv.GH_CONFIG_DIR).toBe(material)
    expect(gatewayEnv.GH_HOST).toBe(new URL(harness.world().service().listenerUrl).host)
    expect(gatewayEnv.GIT_TERMINAL_PROMPT).toBe("0")
    expect(fs.statSync(path.join(material, "gitconfig")).mode & 0o777).toBe(0o440)
    const bearer = fs.readFileSync(path.join(material, "bearer_acme_widgets"), "utf8")
    expect(bearer.length).toBeGreaterThan(20)
    // The bearer is in the mounted file only: in no variable of the gateway.
    expect(Object.values(gatewayEnv).some((value) => value.includes(bearer))).toBe(false)

    const work = fs.mkdtempSync(path.join(os.tmpdir(), "svc-repo-k8s-git-"))
    const gitEnv = { ...Object.fromEntries(REPOSITORY_VARIABLES.map((name) => [name, gatewayEnv[name]!])), PATH: "/usr/bin:/bin", HOME: work }
    const git = (args: ReadonlyArray<string>, cwd = work) => runWith(gitEnv, ["/usr/bin/git", "-C", cwd, ...args])
    const clone = path.join(work, "widgets")
    const cloned = await git(["clone", "-q", "https://github.com/acme/widgets", clone])
    expect({ status: cloned.status, stderr: cloned.stderr }).toEqual({ status: 0, stderr: "" })
    const commit = await git(["-c", "user.name=agent", "-c", "user.email=agent@example.test", "commit", "--allow-empty", "-q", "-m", "work"], clone)
    expect(commit.status).toBe(0)
    const pushed = await git(["push", "-q", "origin", "HEAD:refs/heads/agent/k8s-task"], clone)
    expect({ status: pushed.status, stderr: pushed.stderr }).toEqual({ status: 0, stderr: "" })
    expect((await git(["ls-remote", "origin"], clone)).stdout).toContain("\trefs/heads/agent/k8s-task\n")
    const refused = await git(["push", "-q", "origin", "HEAD:refs/heads/main"], clone)
    expect(refused.status).not.toBe(0)
    expect(refused.stderr).toContain("403")

    expect(await listener(bearer)).toBe(200)
    expect(await run(retireAgentSessions({ namespaceId, agentId: ref.agentId }, null))).toEqual(Either.right(undefined))
    expect(await readObject(clusterOf(state), secretRef)).toBeUndefined()
    expect(await listener(bearer)).toBe(401)
    expect(Either.getOrThrow(await run(repositoryEnvironment(ref)))).toEqual({})

    expect(await Effect.runPromise(Effect.either(compute.deleteGateway(ref)))).toEqual(Either.right(undefined))
    fs.rmSync(work, { recursive: true, force: true })
  }, 10 * 60_000)

  it("without repositoryListenerUrl a deployment with grants fails NOT_IMPLEMENTED for good, naming the setting, and opens no session", async () => {
    const ref = newRef()
    const unconfigured = kubernetesDriver(state)
    const failed = await run(Effect.provideService(ensureRevisionSessions(ref, [grant("git-read")], 1), Compute.ComputeDriver, unconfigured))
    expect(failed).toEqual(Either.left(new WorkFailure({
      code: "NOT_IMPLEMENTED",
      message: Kubernetes.REPOSITORY_LISTENER_MISSING,
      permanent: true
    })))
    expect(await run(Effect.flatMap(AgentRepositorySessionsRepo, (rows) => rows.live(ref.revisionId)))).toEqual(Either.right([]))
    // Without grants nothing is asked of the driver: the deployment goes on.
    expect(await run(Effect.provideService(ensureRevisionSessions(ref, [], 1), Compute.ComputeDriver, unconfigured))).toEqual(Either.right(undefined))
  })
})
