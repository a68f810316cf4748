/**
 * The Agent half of the `kubernetes` driver. Start applies the Agent's objects (server-side
 * apply: a restarted worker re-adopts whatever exists) and waits until the Deployment is
 * Available with this revision and the gateway answers `/readyz` through the endpoint resolver.
 * Stop scales to zero and removes the Service (routing); delete removes every object of the
 * Agent. A revision's gateway token lives in its Secret and is kept when the same revision is
 * applied again, so an adopted Pod keeps answering to it.
 */
import { randomBytes } from "node:crypto"
import type { KubernetesObject, V1Deployment, V1Pod, V1Secret } from "@kubernetes/client-node"
import { Duration, Effect, Schedule } from "effect"
import type { ComputeDriverShape, ComputeFailure, DiagnosticsCheck, GatewayHealth, GatewayRef, GatewaySpec } from "../driver.js"
import { secretNameProblem } from "../local/environment.js"
import { probeModel } from "../local/modelProbe.js"
import { answers200 } from "../local/readiness.js"
import { agentManifests, filesObjectName, type GatewayWorkload, TOKEN_VARIABLE } from "./agentObjects.js"
import { type Cluster, failure, KubernetesCodes } from "./client.js"
import { HarnessVariables } from "../harness.js"
import { harnessObjectName } from "./harnessObjects.js"
import type { DeviceIdentity } from "../gatewayRpc.js"
import { SERVICE_DEVICE_SCOPES } from "../pairing.js"
import type { EndpointResolver, GatewayAddress } from "./endpoints.js"
import { agentObjectName, GATEWAY_PORT, LABELS, MANAGED_BY } from "./names.js"
import { removeAgentMaterial, repositoryMountFor } from "./repositoryClients.js"
import { makeWorkspaceFiles } from "./workspaceFiles.js"
import { agentPods, isAvailable, objectRef, readWorkload, requireNamespace, runsRevision, tokenFor } from "./workload.js"
import { withExportedSpan } from "../../../observability/spans.js"

export interface GatewayOptions {
  readonly settings: GatewayWorkload
  readonly resolver: EndpointResolver
  /** The longest a start waits for the Deployment and `/readyz` (default 10 min). */
  readonly readinessTimeout?: Duration.DurationInput | undefined
  readonly probeTimeout?: Duration.DurationInput | undefined
  /** The longest a workspace file call waits to connect, and then for its answer (default 15 s, 30 s). */
  readonly workspaceTimeout?: Duration.DurationInput | undefined
  /** The service's device key for the gateways' RPC (`deviceIdentityFromSecret`); the Pods' `pairing` containers approve its id. */
  readonly device: DeviceIdentity
  /** How long a workspace call waits for the device to be approved (default 20 s). */
  readonly pairingWait?: Duration.DurationInput | undefined
  /** Extra headers of the RPC's upgrade request (tests: a cluster client's, so the gateway on loopback sees a remote client). */
  readonly rpcHeaders?: ((address: GatewayAddress) => Readonly<Record<string, string>>) | undefined
}

type AgentHalf = Omit<ComputeDriverShape, "id" | "supportsExistingNamespace" | "provisionNamespace" | "teardownNamespace">

const notReady = failure(KubernetesCodes.GATEWAY_START_TIMEOUT, "The gateway did not become ready in time.", false)

export const makeKubernetesGateways = (cluster: Cluster, options: GatewayOptions): AgentHalf => {
  const workload = { ...options.settings, serviceDevice: { id: options.device.id, scopes: SERVICE_DEVICE_SCOPES } }
  const readinessTimeout = options.readinessTimeout ?? Duration.minutes(10)
  const address = (namespace: string, name: string) => ({ namespace, service: name, port: GATEWAY_PORT })

  const validateSpec = (spec: GatewaySpec) => {
    const harnessNames: ReadonlyArray<string> = [HarnessVariables.token, HarnessVariables.workspaceId]
    const problems = [
      ...Object.keys(spec.env).filter((name) => secretNameProblem(name) !== undefined),
      ...Object.keys(spec.harness?.env ?? {}).filter((name) => !harnessNames.includes(name))
    ]
    const valuesOk = typeof spec.values === "object" && spec.values !== null && !Array.isArray(spec.values)
    return problems.length === 0 && valuesOk
      ? Effect.void
      : Effect.logWarning("kubernetes compute: gateway spec refused", { agentId: spec.agentId, problems, valuesOk }).pipe(
        Effect.zipRight(
          Effect.fail(failure(KubernetesCodes.GATEWAY_SPEC_INVALID, "The Agent's configuration or Secret variable names cannot be used.", true))
        )
      )
  }

  const readToken = (namespace: string, name: string, revisionId: string) =>
    cluster.read<V1Secret>(objectRef("Secret", namespace, name)).pipe(Effect.map((secret) => tokenFor(secret, revisionId, TOKEN_VARIABLE)))

  const gatewayReady = (namespace: string, name: string) =>
    options.resolver(address(namespace, name)).pipe(
      Effect.flatMap((url) => answers200(`${url}/readyz`)),
      Effect.orElseSucceed(() => false)
    )

  /**
   * Once the Deployment is applied the start is under way: an API server that stops answering
   * for a while (a restart) is waited for, within the readiness budget, instead of failing it.
   */
  const whileStarting = <A>(step: Effect.Effect<A, ComputeFailure>) =>
    step.pipe(
      Effect.retry({
        schedule: Schedule.spaced(Duration.seconds(1)).pipe(Schedule.upTo(readinessTimeout)),
        while: (error) => !error.permanent
      })
    )

  /** Polls until the revision is Available and `/readyz` answers, or the budget is spent. */
  const awaitAvailable = (namespace: string, name: string, spec: GatewaySpec) =>
    Effect.gen(function* () {
      const deployment = yield* cluster.read<V1Deployment>(objectRef("Deployment", namespace, name))
      const pods = yield* agentPods(cluster, namespace, spec.agentId)
      const available = deployment !== undefined && runsRevision(deployment, spec.revisionId) &&
        isAvailable(deployment, pods, spec.revisionId)
      if (!available || !(yield* gatewayReady(namespace, name))) return yield* notReady
    }).pipe(whileStarting)

  const probe = (namespace: string, name: string, spec: GatewaySpec, token: string) =>
    Effect.gen(function* () {
      if (spec.modelProbe === undefined) return
      const url = yield* options.resolver(address(namespace, name))
      const result = yield* probeModel({ url, token }, { model: spec.modelProbe.model, timeout: options.probeTimeout })
      if (result._tag === "Succeeded") return
      yield* Effect.logWarning("kubernetes compute: model probe failed", { agentId: spec.agentId, ...result })
      if (result._tag === "AuthenticationFailed") {
        yield* scaleToZero(namespace, name)
        return yield* failure(KubernetesCodes.RUNTIME_AUTHENTICATION_FAILED, "The model provider rejected the Agent's credential.", true)
      }
      return yield* failure(KubernetesCodes.MODEL_PROBE_FAILED, "The gateway could not complete a model request.", false)
    })

  const scaleToZero = (namespace: string, name: string) =>
    cluster.scale(objectRef("Deployment", namespace, name), 0)

  const startGateway: AgentHalf["startGateway"] = (spec) =>
    Effect.gen(function* () {
      yield* validateSpec(spec)
      const namespace = yield* requireNamespace(cluster, spec.namespaceId)
      const name = agentObjectName(spec.agentId)
      const token = (yield* readToken(namespace, name, spec.revisionId)) ?? randomBytes(32).toString("base64url")
      const repositories = yield* repositoryMountFor(cluster, namespace, spec)
      const manifests = agentManifests(spec, namespace, token, workload, repositories)
      // Inputs first, the Deployment last: a Pod never starts before its Secret and ConfigMaps.
      const inputs = [manifests.files, manifests.secret, manifests.harnessSecret, manifests.configMap, manifests.volume, manifests.service]
      for (const object of [...inputs, manifests.deployment]) if (object !== undefined) yield* cluster.apply(object)
      // A revision without initial files (or a harness): an earlier revision's are no longer mounted.
      if (manifests.files === undefined) yield* whileStarting(cluster.remove(objectRef("ConfigMap", namespace, filesObjectName(name))))
      if (manifests.harnessSecret === undefined) yield* whileStarting(cluster.remove(objectRef("Secret", namespace, harnessObjectName(name))))
      yield* Effect.logInfo("kubernetes compute: gateway applied", { agentId: spec.agentId, revisionId: spec.revisionId, namespace })
      yield* awaitAvailable(namespace, name, spec)
      yield* probe(namespace, name, spec, token)
    }).pipe(withExportedSpan("KubernetesCompute.startGateway", { attributes: { agentId: spec.agentId, revisionId: spec.revisionId } }))

  const stopGateway: AgentHalf["stopGateway"] = (ref) =>
    Effect.gen(function* () {
      const workload = yield* readWorkload(cluster, ref)
      if (workload === undefined || !runsRevision(workload.deployment, ref.revisionId)) return
      yield* scaleToZero(workload.namespace, workload.name)
      yield* cluster.remove(objectRef("Service", workload.namespace, workload.name))
    }).pipe(withExportedSpan("KubernetesCompute.stopGateway", { attributes: { agentId: ref.agentId } }))

  const deleteGateway: AgentHalf["deleteGateway"] = (ref) =>
    Effect.gen(function* () {
      const namespace = (yield* readWorkload(cluster, ref))?.namespace
      if (namespace === undefined) return
      const name = agentObjectName(ref.agentId)
      for (const kind of ["Deployment", "Service", "Secret", "ConfigMap", "PersistentVolumeClaim"] as const) {
        yield* cluster.remove(objectRef(kind, namespace, name))
      }
      yield* cluster.remove(objectRef("ConfigMap", namespace, filesObjectName(name)))
      yield* cluster.remove(objectRef("Secret", namespace, harnessObjectName(name)))
      yield* removeAgentMaterial(cluster, namespace, ref.agentId)
    }).pipe(withExportedSpan("KubernetesCompute.deleteGateway", { attributes: { agentId: ref.agentId } }))

  const gatewayHealth: AgentHalf["gatewayHealth"] = (ref) =>
    Effect.gen(function* () {
      const workload = yield* readWorkload(cluster, ref)
      if (workload === undefined || !runsRevision(workload.deployment, ref.revisionId)) return "absent" as GatewayHealth
      if ((workload.deployment.spec?.replicas ?? 0) === 0) return "stopped"
      const pods = yield* agentPods(cluster, workload.namespace, ref.agentId)
      if (isAvailable(workload.deployment, pods, ref.revisionId) && (yield* gatewayReady(workload.namespace, workload.name))) {
        return "healthy"
      }
      const created = Date.parse(workload.deployment.metadata?.creationTimestamp?.toString() ?? "")
      return Date.now() - created < Duration.toMillis(readinessTimeout) ? "starting" : "unhealthy"
    })

  const diagnostics: AgentHalf["diagnostics"] = (ref) =>
    Effect.gen(function* () {
      const workload = yield* readWorkload(cluster, ref)
      const deployment = workload !== undefined && runsRevision(workload.deployment, ref.revisionId) ? workload.deployment : undefined
      const pods: ReadonlyArray<V1Pod> = workload === undefined ? [] : yield* agentPods(cluster, workload.namespace, ref.agentId)
      const pod = pods.find((candidate) => candidate.metadata?.labels?.[LABELS.revisionId] === ref.revisionId)
      const restarts = pod?.status?.containerStatuses?.reduce((sum, status) => sum + status.restartCount, 0) ?? 0
      const ready = workload !== undefined && deployment !== undefined && (yield* gatewayReady(workload.namespace, workload.name))
      const available = deployment?.status?.conditions?.some((c) => c.type === "Available" && c.status === "True") === true
      const check = (name: string, status: DiagnosticsCheck["status"], message: string): DiagnosticsCheck => ({ name, status, message })
      return [
        check("deployment.available", available ? "pass" : "fail", available ? "The Deployment is Available." : "The Deployment is not Available."),
        check("pod.phase", pod?.status?.phase === "Running" ? "pass" : "fail", `The Pod is ${pod?.status?.phase ?? "absent"}.`),
        check("pod.restarts", restarts === 0 ? "pass" : "warn", `The gateway container restarted ${restarts} times.`),
        check("gateway.ready", ready ? "pass" : "fail", ready ? "The gateway answers /readyz." : "The gateway is not ready.")
      ]
    })

  const endpointOf = (ref: GatewayRef) =>
    Effect.gen(function* () {
      const workload = yield* readWorkload(cluster, ref)
      const token = workload === undefined ? undefined : yield* readToken(workload.namespace, workload.name, ref.revisionId)
      if (workload === undefined || !runsRevision(workload.deployment, ref.revisionId) ||
        (workload.deployment.spec?.replicas ?? 0) === 0 || token === undefined) {
        return yield* failure(KubernetesCodes.GATEWAY_NOT_RUNNING, "No gateway runs this revision.", false)
      }
      const at = address(workload.namespace, workload.name)
      const url = yield* options.resolver(at)
      return { url, token, headers: options.rpcHeaders?.(at) }
    })

  const privateEndpoint: AgentHalf["privateEndpoint"] = (ref) => endpointOf(ref).pipe(Effect.map(({ token, url }) => ({ url, token })))

  const scoped = options.settings.scope === undefined ? "" : `,${LABELS.scope}=${options.settings.scope}`
  // Only this instance's gateways: another service sharing the cluster keeps its own.
  const liveGateways: AgentHalf["liveGateways"] = cluster.list<KubernetesObject & V1Deployment>("apps/v1", "Deployment", {
    labelSelector: `${LABELS.managedBy}=${MANAGED_BY},${LABELS.component}=gateway${scoped}`
  }).pipe(
    Effect.map((deployments) =>
      deployments.flatMap((deployment) => {
        const labels = deployment.metadata?.labels ?? {}
        const [namespaceId, agentId, revisionId] = [labels[LABELS.namespaceId], labels[LABELS.agentId], labels[LABELS.revisionId]]
        if ((deployment.spec?.replicas ?? 0) === 0 || namespaceId === undefined || agentId === undefined || revisionId === undefined) return []
        return [{ namespaceId, agentId, revisionId } as GatewayRef]
      })
    )
  )

  return {
    startGateway,
    stopGateway,
    deleteGateway,
    gatewayHealth,
    diagnostics,
    ...makeWorkspaceFiles(endpointOf, {
      device: options.device,
      pairingWait: options.pairingWait,
      connectTimeout: options.workspaceTimeout,
      callTimeout: options.workspaceTimeout
    }),
    privateEndpoint,
    liveGateways
  }
}
