/**
 * The `kubernetes` driver's repository client material against the real API server and
 * controllers: the per-revision Secret field by field (labels, session ids in an annotation, the
 * bearers only in `data`), a rewrite of one repository, what `sessions`/`environment`/`revisions`
 * read back, the gateway's mount and environment in the applied Deployment (no bearer in the Pod
 * spec, the gateway's Secret or another container), `remove`, the Agent's deletion, and the
 * refusals: a bad repository name or id, a Namespace not provisioned, no `repositoryListenerUrl`.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { decodeInstallationConfig } from "@svc/core/config"
import * as Compute from "@svc/core/drivers/compute"
import * as Kubernetes from "@svc/core/drivers/compute/kubernetes"
import { NamespaceId } from "@svc/core/schema"
import type { KubernetesObject } from "@kubernetes/client-node"
import { Duration, Effect, Either, Redacted } from "effect"
import type { ClusterState } from "../../../testing/kubernetes/cluster.js"
import { clusterOf, kubernetesDriver, readObject } from "../../../testing/kubernetes/driver.js"
import { allowed, type NetworkPolicyObject } from "../../../testing/kubernetes/networkPolicy.js"
import { sharedCluster } from "../../../testing/kubernetes/shared.js"

const LISTENER = "http://svc-credentials.svc-system.svc.cluster.local:8181"
const BEARER_WIDGETS = "rsb_widgets-0123456789abcdef"
const BEARER_TOOLS = "rsb_tools-fedcba9876543210"

let state: ClusterState
let cluster: Compute.Cluster
let driver: Compute.ComputeDriverShape
let clients: Compute.RepositoryClients
const namespace = { id: NamespaceId.make() }
const absent = { id: NamespaceId.make() }
const ns = () => Compute.kubernetesNamespace(namespace)

beforeAll(async () => {
  state = await sharedCluster()
  cluster = clusterOf(state)
  driver = kubernetesDriver(state, { readinessTimeout: Duration.seconds(2), scope: "test-repositories" }, { repositoryListenerUrl: LISTENER })
  clients = driver.repositoryClients!
  await Effect.runPromise(driver.provisionNamespace(namespace))
}, 20 * 60_000)

afterAll(async () => {
  await Effect.runPromise(Effect.either(driver.teardownNamespace(namespace)))
}, 180_000)

const secret = (name: string) =>
  Effect.promise(() => readObject<{ data?: Record<string, string>; type?: string }>(cluster, { apiVersion: "v1", kind: "Secret", namespace: ns(), name }))
const text = (data: Record<string, string> | undefined, key: string) => Buffer.from(data?.[key] ?? "", "base64").toString("utf8")

const ref = (agentId: string, revisionId: string): Compute.GatewayRef => ({ namespaceId: namespace.id, agentId, revisionId })
const client = (repository: string, sessionId: string, bearer: string): Compute.RepositoryClient => ({
  sessionId,
  repository,
  // The credential service's own address: the material uses the setting's.
  listenerUrl: "http://127.0.0.1:9",
  bearer: Redacted.make(bearer)
})

const failed = <A>(effect: Effect.Effect<A, Compute.ComputeError>) =>
  Effect.map(Effect.flip(effect), (error) => error._tag === "ComputeFailure" ? { code: error.code, message: error.message, permanent: error.permanent } : error)

interface PodTemplate {
  spec: {
    template: {
      spec: {
        containers: Array<{ name: string; env: Array<{ name: string; value: string }>; volumeMounts?: Array<Record<string, unknown>> }>
        volumes: Array<Record<string, unknown>>
      }
    }
  }
}

describe("kubernetes repository client material", () => {
  it.live("writes the revision's Secret, reads it back, rewrites one repository and removes it", () =>
    Effect.gen(function* () {
      const gateway = ref("agt_repo_one", "rev_repo_one")
      yield* clients.write(gateway, client("acme/widgets", "rs_widgets_1", BEARER_WIDGETS))
      yield* clients.write(gateway, client("acme/tools", "rs_tools_1", BEARER_TOOLS))
      const name = Compute.repositoriesObjectName(gateway)
      expect(name).toMatch(/^agent-[0-9a-f]{16}-repositories-[0-9a-f]{10}$/)
      const stored = (yield* secret(name))!
      expect(stored.metadata?.labels).toEqual({
        "app.kubernetes.io/managed-by": "svc",
        "app.kubernetes.io/component": "repositories",
        "svc/namespace-id": namespace.id,
        "svc/agent-id": "agt_repo_one",
        "svc/revision-id": "rev_repo_one",
        "svc/scope": "test-repositories"
      })
      expect(stored.metadata?.annotations).toEqual({
        [Compute.SESSIONS_ANNOTATION]: JSON.stringify({ "acme/widgets": "rs_widgets_1", "acme/tools": "rs_tools_1" }),
        [Compute.LISTENER_ANNOTATION]: "svc-credentials.svc-system.svc.cluster.local:8181"
      })
      // Bearers only in data: never in labels or annotations.
      expect(JSON.stringify(stored.metadata)).not.toContain(BEARER_WIDGETS)
      expect(JSON.stringify(stored.metadata)).not.toContain(BEARER_TOOLS)
      expect(stored.type).toBe("Opaque")
      expect(Object.keys(stored.data ?? {}).sort()).toEqual(["bearer_acme_tools", "bearer_acme_widgets", "credential-helper", "gitconfig", "hosts.yml"])
      expect(text(stored.data, "bearer_acme_widgets")).toBe(BEARER_WIDGETS)
      expect(text(stored.data, "bearer_acme_tools")).toBe(BEARER_TOOLS)
      expect(text(stored.data, "gitconfig")).toBe([
        `[url "${LISTENER}/"]`,
        "\tinsteadOf = https://github.com/",
        `[credential "${LISTENER}"]`,
        "\tuseHttpPath = true",
        "\thelper =",
        `\thelper = "!sh \\"$(dirname \\"$GIT_CONFIG_GLOBAL\\")/credential-helper\\""`,
        ""
      ].join("\n"))
      // The CLI's one token for the listener: the first repository's by name (acme/tools).
      expect(text(stored.data, "hosts.yml")).toBe(
        `"svc-credentials.svc-system.svc.cluster.local:8181":\n    oauth_token: "${BEARER_TOOLS}"\n    user: x-access-token\n    git_protocol: https\n`
      )
      expect(text(stored.data, "credential-helper")).not.toContain("/etc/")

      expect([...(yield* clients.sessions(gateway))].sort()).toEqual(["rs_tools_1", "rs_widgets_1"])
      expect(yield* clients.environment(gateway)).toEqual({
        GIT_CONFIG_GLOBAL: "/etc/svc-repositories/gitconfig",
        GIT_TERMINAL_PROMPT: "0",
        GH_CONFIG_DIR: "/etc/svc-repositories",
        GH_HOST: "svc-credentials.svc-system.svc.cluster.local:8181",
        GH_NO_UPDATE_NOTIFIER: "1"
      })
      expect(yield* clients.revisions({ namespaceId: namespace.id, agentId: "agt_repo_one" })).toEqual(["rev_repo_one"])

      // A renewal replaces that repository's session and bearer, and keeps the other's.
      yield* clients.write(gateway, client("acme/widgets", "rs_widgets_2", "rsb_widgets-renewed"))
      const renewed = (yield* secret(name))!
      expect(text(renewed.data, "bearer_acme_widgets")).toBe("rsb_widgets-renewed")
      expect(text(renewed.data, "bearer_acme_tools")).toBe(BEARER_TOOLS)
      expect([...(yield* clients.sessions(gateway))].sort()).toEqual(["rs_tools_1", "rs_widgets_2"])

      yield* clients.remove(gateway)
      expect(yield* secret(name)).toBeUndefined()
      expect(yield* clients.sessions(gateway)).toEqual([])
      expect(yield* clients.environment(gateway)).toEqual({})
      expect(yield* clients.revisions({ namespaceId: namespace.id, agentId: "agt_repo_one" })).toEqual([])
      // Idempotent: removing nothing succeeds.
      yield* clients.remove(gateway)
    }))

  it.live("mounts the material into the gateway container only, with its environment and no bearer in the Pod spec", () =>
    Effect.gen(function* () {
      const gateway = ref("agt_repo_pod", "rev_repo_pod")
      yield* clients.write(gateway, client("acme/widgets", "rs_pod", BEARER_WIDGETS))
      const environment = yield* clients.environment(gateway)
      const env = Object.fromEntries(Object.entries(environment).map(([k, v]) => [k, Redacted.make(v)]))
      // No test node runs this namespace's Pods: the start times out after applying its objects.
      const started = yield* failed(driver.startGateway({ ...gateway, values: {}, env: { ...env, API_KEY: Redacted.make("sk-other") } }))
      expect(started).toEqual({ code: "GATEWAY_START_TIMEOUT", message: "The gateway did not become ready in time.", permanent: false })
      const name = Compute.agentObjectName("agt_repo_pod")
      const deployment = (yield* Effect.promise(() =>
        readObject<PodTemplate>(cluster, { apiVersion: "apps/v1", kind: "Deployment", namespace: ns(), name })
      ))!
      const pod = deployment.spec.template.spec
      expect(pod.volumes).toContainEqual({
        name: "repositories",
        secret: { secretName: Compute.repositoriesObjectName(gateway), defaultMode: 0o440 }
      })
      const [container, ...others] = pod.containers
      expect(container!.name).toBe("gateway")
      expect(container!.volumeMounts).toContainEqual({ name: "repositories", mountPath: "/etc/svc-repositories", readOnly: true })
      expect(container!.env).toEqual([...Compute.podEnvironment, ...Object.entries(environment).map(([k, v]) => ({ name: k, value: v }))])
      for (const other of others) expect(JSON.stringify(other)).not.toContain("repositories")
      expect(JSON.stringify(deployment)).not.toContain(BEARER_WIDGETS)
      // The gateway's own Secret keeps its values but neither the bearer nor the material's variables.
      const own = (yield* secret(name))!
      expect(Object.keys(own.data ?? {}).sort()).toEqual(["API_KEY", "OPENCLAW_GATEWAY_TOKEN"])
      expect(JSON.stringify(own)).not.toContain(Buffer.from(BEARER_WIDGETS).toString("base64"))

      // Another revision of the Agent has material too; deleting the Agent removes both.
      const next = ref("agt_repo_pod", "rev_repo_pod_2")
      yield* clients.write(next, client("acme/widgets", "rs_pod_2", BEARER_WIDGETS))
      expect([...(yield* clients.revisions({ namespaceId: namespace.id, agentId: "agt_repo_pod" }))].sort()).toEqual(["rev_repo_pod", "rev_repo_pod_2"])
      yield* driver.deleteGateway(gateway)
      expect(yield* clients.revisions({ namespaceId: namespace.id, agentId: "agt_repo_pod" })).toEqual([])
      expect(yield* secret(Compute.repositoriesObjectName(next))).toBeUndefined()
    }), 120_000)

  it.live("a revision without material gets no mount, no volume and no repository variables", () =>
    Effect.gen(function* () {
      const gateway = ref("agt_repo_none", "rev_repo_none")
      expect(yield* failed(driver.startGateway({ ...gateway, values: {}, env: {} }))).toEqual({ code: "GATEWAY_START_TIMEOUT", message: "The gateway did not become ready in time.", permanent: false })
      const deployment = (yield* Effect.promise(() =>
        readObject<PodTemplate>(cluster, { apiVersion: "apps/v1", kind: "Deployment", namespace: ns(), name: Compute.agentObjectName("agt_repo_none") })
      ))!
      expect(deployment.spec.template.spec.volumes.map((volume) => volume.name)).toEqual(["config", "data", "tmp"])
      expect(deployment.spec.template.spec.containers[0]!.env).toEqual(Compute.podEnvironment)
      expect(yield* clients.environment(gateway)).toEqual({})
      yield* driver.deleteGateway(gateway)
    }), 120_000)
})

describe("kubernetes repository client material: the listener is admitted", () => {
  it.live("the first material adds svc-repository-egress: gateways reach the control plane's listener port, nothing else more", () =>
    Effect.gen(function* () {
      yield* clients.write(ref("agt_repo_net", "rev_repo_net"), client("acme/widgets", "rs_net", BEARER_WIDGETS))
      const policy = yield* Effect.promise(() =>
        readObject<NetworkPolicyObject>(cluster, { apiVersion: "networking.k8s.io/v1", kind: "NetworkPolicy", namespace: ns(), name: "svc-repository-egress" })
      )
      expect(policy?.metadata.labels).toEqual({ "app.kubernetes.io/managed-by": "svc", "svc/namespace-id": namespace.id })
      expect(policy?.spec).toEqual({
        podSelector: { matchLabels: { "app.kubernetes.io/managed-by": "svc", "app.kubernetes.io/component": "gateway" } },
        policyTypes: ["Egress"],
        egress: [{ to: [{ namespaceSelector: { matchLabels: { "svc/control-plane": "true" } } }], ports: [{ protocol: "TCP", port: 8181 }] }]
      })
      const policies = yield* cluster.list<NetworkPolicyObject & KubernetesObject>("networking.k8s.io/v1", "NetworkPolicy", { namespace: ns() })
      const world = {
        policies,
        namespaces: new Map<string, Record<string, string>>([[ns(), {}], ["svc-system", { "svc/control-plane": "true" }], ["svc-other-tenant", {}]])
      }
      const gateway = { namespace: ns(), labels: { "app.kubernetes.io/managed-by": "svc", "app.kubernetes.io/component": "gateway" }, ip: "10.244.1.5" }
      const listener = { namespace: "svc-system", labels: { app: "svc-credentials" }, ip: "10.244.2.2" }
      expect(allowed(world, gateway, listener, 8181)).toBe(true)
      expect(allowed(world, gateway, listener, 5432)).toBe(false)
      expect(allowed(world, gateway, { ...listener, namespace: "svc-other-tenant" }, 8181)).toBe(false)
      expect(allowed(world, gateway, { ip: "10.0.0.9" }, 8181)).toBe(false)
      yield* clients.remove(ref("agt_repo_net", "rev_repo_net"))
    }))
})

describe("kubernetes repository client material: refusals", () => {
  it.live("a bad repository name or id, and a Namespace not provisioned", () =>
    Effect.gen(function* () {
      const invalid = { code: "GATEWAY_SPEC_INVALID", permanent: true }
      expect(yield* failed(clients.write(ref("agt_bad", "rev_bad"), client("Acme/../x", "rs_x", "b")))).toEqual({
        ...invalid,
        message: "The repository name cannot name client material."
      })
      expect(yield* failed(clients.write(ref("agt bad", "rev_bad"), client("acme/widgets", "rs_x", "b")))).toEqual({
        ...invalid,
        message: "The Agent or revision id cannot label a Kubernetes object."
      })
      expect(yield* failed(clients.sessions(ref("agt_bad", "rev/bad")))).toEqual({
        ...invalid,
        message: "The Agent or revision id cannot label a Kubernetes object."
      })
      const elsewhere = { namespaceId: absent.id, agentId: "agt_bad", revisionId: "rev_bad" }
      expect(yield* failed(clients.write(elsewhere, client("acme/widgets", "rs_x", "b")))).toEqual({
        code: "NAMESPACE_RUNTIME_MISSING",
        message: "The Namespace's Kubernetes namespace is not provisioned yet.",
        permanent: false
      })
      // Reads of a Namespace that is not there find nothing; removing nothing succeeds.
      expect(yield* clients.sessions(elsewhere)).toEqual([])
      expect(yield* clients.environment(elsewhere)).toEqual({})
      expect(yield* clients.revisions(elsewhere)).toEqual([])
      yield* clients.remove(elsewhere)
    }))

  it("without repositoryListenerUrl the driver offers no material and says what to configure", () => {
    const plain = kubernetesDriver(state)
    expect(plain.repositoryClients).toBeUndefined()
    expect(plain.repositoryClientsUnavailable).toBe(Kubernetes.REPOSITORY_LISTENER_MISSING)
    expect(Kubernetes.REPOSITORY_LISTENER_MISSING).toContain("drivers.compute.repositoryListenerUrl")
  })

  it("the setting takes an http(s) origin and refuses anything else with its path", () => {
    const decode = (repositoryListenerUrl: string) =>
      Either.match(decodeInstallationConfig("/etc/svc/installation.json", { drivers: { compute: { id: "kubernetes", repositoryListenerUrl } } }), {
        onLeft: (error) => error.problems.map((problem) => problem.path),
        onRight: (config) => config.drivers.compute
      })
    expect(decode(LISTENER)).toEqual({ id: "kubernetes", repositoryListenerUrl: LISTENER })
    expect(decode("https://credentials.example.com")).toEqual({ id: "kubernetes", repositoryListenerUrl: "https://credentials.example.com" })
    for (const bad of ["ftp://credentials.example.com", "http://user:pw@credentials:8181", "http://credentials:8181/path", "credentials:8181", ""]) {
      expect(decode(bad), bad).toEqual(["drivers.compute.repositoryListenerUrl"])
    }
  })
})
