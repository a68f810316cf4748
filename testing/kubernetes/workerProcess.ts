/**
 * `svc worker` for the kubernetes tests that kill workers (run with vite-node as a child
 * process): the worker's own process Layer, with one substitution: gateways are reached through
 * the test node's loopback ports (`fileResolver`, the file `SVC_K8S_TEST_ENDPOINTS` names), as
 * the API server cannot proxy to them (../shared/k8s/README.md), and the tests' service device
 * (`testServiceDevice`) reached as a cluster client. Everything else, the kubernetes
 * Compute Driver and its settings included, comes from the process's configuration as in production.
 */
import { NodeRuntime } from "@effect/platform-node"
import * as Compute from "@svc/core/drivers/compute"
import * as Kubernetes from "@svc/core/drivers/compute/kubernetes"
import { workerProcess } from "@svc/worker"
import { Effect, Layer } from "effect"
import { clusterClientHeaders, testServiceDevice } from "./driver.js"
import { fileResolver } from "./loopbackResolver.js"

const process_ = workerProcess((config) =>
  Effect.gen(function* () {
    const selected = config.installation.drivers.compute
    const endpointsFile = process.env.SVC_K8S_TEST_ENDPOINTS
    if (selected.id !== "kubernetes" || endpointsFile === undefined) {
      return yield* Effect.dieMessage("the test worker needs drivers.compute kubernetes and SVC_K8S_TEST_ENDPOINTS")
    }
    const { id: _id, ...settings } = selected
    const cluster = Kubernetes.makeCluster(Kubernetes.loadKubeConfig(settings))
    // The tests' service device and cluster-client headers, as the in-process test drivers use: every
    // worker (a replacement too) applies the same Pod spec and is the same, approved, device.
    const driver = Kubernetes.makeKubernetesComputeFor(cluster, settings, {
      resolver: fileResolver(cluster, endpointsFile),
      device: testServiceDevice,
      rpcHeaders: clusterClientHeaders
    })
    return Compute.metered(Layer.succeed(Compute.ComputeDriver, driver))
  })
)

process_.pipe(Layer.launch, (main) => NodeRuntime.runMain(main, { disablePrettyLogger: true }))
