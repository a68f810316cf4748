/**
 * The `kubernetes` Compute Driver's settings in the Installation configuration and its selection:
 * the full shape decodes, bad quantities, endpoints, scopes and unknown keys are refused with their
 * path, the endpoint resolver follows `endpoints` (or where the credentials come from), and the
 * selected driver is built from a kubeconfig (an unreadable one stops the process at start).
 */
import { describe, expect, it } from "@effect/vitest"
import { decodeInstallationConfig, defaultInstallationConfig, InstallationConfiguration, type LoadedProcessConfig, ProcessConfiguration } from "@svc/core/config"
import * as Compute from "@svc/core/drivers/compute"
import * as Kubernetes from "@svc/core/drivers/compute/kubernetes"
import { Effect, Either, Exit, Layer, Option } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

const FILE = "/etc/svc/installation.json"

const kubeconfig = () => {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "svc-kubeconfig-")), "config.json")
  fs.writeFileSync(file, JSON.stringify({
    apiVersion: "v1",
    kind: "Config",
    clusters: [{ name: "c", cluster: { server: "https://127.0.0.1:1" } }],
    users: [{ name: "u", user: { token: "t" } }],
    contexts: [{ name: "prod", context: { cluster: "c", user: "u" } }],
    "current-context": "prod"
  }))
  return file
}

const full = {
  id: "kubernetes",
  kubeconfigPath: "/etc/svc/kubeconfig",
  context: "prod",
  image: "registry.example.com/openclaw:2026.9.6",
  resources: { cpuRequest: "500m", memoryRequest: "1Gi", cpuLimit: "2", memoryLimit: "3Gi", storage: "5Gi" },
  storageClassName: "fast",
  clusterDomain: "cluster.local",
  endpoints: "apiServerProxy",
  scope: "prod-eu.1"
}

const selected = (compute: Record<string, unknown>) =>
  Compute.layerFromConfiguration.pipe(
    Layer.provide(Layer.succeed(InstallationConfiguration, { ...defaultInstallationConfig, drivers: { ...defaultInstallationConfig.drivers, compute } } as never)),
    Layer.provide(Layer.succeed(ProcessConfiguration, { dataDir: os.tmpdir(), runtimeDir: os.tmpdir(), secretKey: Option.none() } as unknown as LoadedProcessConfig))
  )

describe("kubernetes Compute settings", () => {
  it("decodes every setting", () => {
    const config = Either.getOrThrow(decodeInstallationConfig(FILE, { drivers: { compute: full } }))
    expect(config.drivers.compute).toEqual(full)
  })

  it("refuses a bad quantity and an unknown key with their path", () => {
    const problems = (compute: unknown) =>
      Either.match(decodeInstallationConfig(FILE, { drivers: { compute } }), {
        onLeft: (error) => error.problems.map((p) => p.path),
        onRight: () => expect.fail("expected a rejection")
      })
    expect(problems({ ...full, resources: { memoryLimit: "lots" } })).toEqual(["drivers.compute.resources.memoryLimit"])
    expect(problems({ ...full, replicas: 2 })).toEqual(["drivers.compute.replicas"])
    // One problem per accepted value (`serviceDns`, `apiServerProxy`), as the loader reports a literal union.
    expect(problems({ ...full, endpoints: "portForward" })).toEqual(["drivers.compute.endpoints", "drivers.compute.endpoints"])
    // `scope` is a label value: at most 63 characters, alphanumeric at both ends.
    for (const scope of ["-prod", "prod_", "a".repeat(64), "prod eu", ""]) {
      expect(problems({ ...full, scope })).toEqual(["drivers.compute.scope"])
    }
  })

  it.effect("reaches gateways by Service DNS in the cluster, through the API server's Service proxy with a kubeconfig", () =>
    Effect.gen(function* () {
      const file = kubeconfig()
      // Nothing listens at the kubeconfig's server (127.0.0.1:1): the proxy's endpoint check fails there.
      const cluster = Kubernetes.makeCluster(Kubernetes.loadKubeConfig({ kubeconfigPath: file }))
      const address = { namespace: "svc-0123", service: "agent-4567", port: Compute.GATEWAY_PORT }
      const resolve = (settings: Compute.KubernetesSettings) => Effect.either(Kubernetes.defaultResolver(cluster, settings)(address))
      expect(yield* resolve({ kubeconfigPath: file, endpoints: "serviceDns", clusterDomain: "corp.local" }))
        .toEqual(Either.right("http://agent-4567.svc-0123.svc.corp.local:18789"))
      expect(yield* resolve({})).toEqual(Either.right("http://agent-4567.svc-0123.svc.cluster.local:18789"))
      for (const settings of [{ kubeconfigPath: file }, { endpoints: "apiServerProxy" as const }]) {
        const proxied = yield* resolve(settings)
        expect(Either.isLeft(proxied) && proxied.left).toMatchObject({ code: "CLUSTER_UNAVAILABLE", permanent: false })
      }
    }))

  it.effect("selects the kubernetes driver over the configured kubeconfig and context", () =>
    Effect.gen(function* () {
      const driver = yield* Compute.ComputeDriver
      expect(driver.id).toBe("kubernetes")
      expect(driver.supportsExistingNamespace).toBe(true)
    }).pipe(Effect.provide(selected({ id: "kubernetes", kubeconfigPath: kubeconfig(), context: "prod" }))))

  it.effect("stops at start when the kubeconfig cannot be read", () =>
    Effect.gen(function* () {
      const exit = yield* Effect.exit(Compute.ComputeDriver.pipe(Effect.provide(selected({ id: "kubernetes", kubeconfigPath: "/nonexistent/kubeconfig" }))))
      expect(Exit.isFailure(exit) && exit.cause._tag === "Die").toBe(true)
    }))
})
