/**
 * Dedicated execution on Kubernetes (SPEC 2.5; docs/decisions/kubernetes.md "Dedicated
 * execution"): the `harness` container in the Agent's Pod, running our model credential proxy
 * (`svc harness`) on the Pod's loopback, and its own Secret `<agent>-harness`, which only that
 * container references: the gateway container never receives the harness credentials. Same
 * network namespace as the gateway, its own UID, a read-only root filesystem, no capabilities.
 * Pure manifests; `agentObjects.ts` places them.
 */
import type { KubernetesObject, V1Container } from "@kubernetes/client-node"
import type { GatewaySpec } from "../driver.js"
import type { ContainerResources } from "./agentObjects.js"
import { HARNESS_HOST, HARNESS_PORT, harnessSecretData, HarnessVariables, renderHarnessValues } from "../harness.js"

export interface HarnessWorkload {
  /** The image whose entry point is `svc` (the service's own); default `defaultHarnessImage`. */
  readonly image?: string | undefined
  readonly resources?: ContainerResources | undefined
}

/** The service's own image; operators set `harnessImage` to the image they run `svc` from. */
export const defaultHarnessImage = "ghcr.io/svc/svc:0.1.0"
/** The harness's UID: not the gateway's, so neither can read the other's process. */
export const HARNESS_UID = 1001
export const HARNESS_CONTAINER = "harness"

export const harnessObjectName = (name: string) => `${name}-harness`

export interface HarnessParts {
  /** The Secret with the harness credentials (possibly none, for credential_source). */
  readonly secret: KubernetesObject
  readonly container: V1Container
  /** The values the gateway renders: its providers pointed at the harness. */
  readonly values: Readonly<Record<string, unknown>>
  /** The Secret's values, for the Pod's roll hash only. */
  readonly secretData: Readonly<Record<string, string>>
}

const containerSecurity = {
  runAsNonRoot: true,
  runAsUser: HARNESS_UID,
  runAsGroup: HARNESS_UID,
  allowPrivilegeEscalation: false,
  readOnlyRootFilesystem: true,
  capabilities: { drop: ["ALL"] },
  seccompProfile: { type: "RuntimeDefault" }
}

/** The harness of a dedicated revision, or `undefined` when the spec has none. */
export const harnessParts = (
  spec: GatewaySpec,
  namespace: string,
  name: string,
  labels: Readonly<Record<string, string>>,
  workload: HarnessWorkload
): HarnessParts | undefined => {
  const harness = spec.harness
  if (harness === undefined) return undefined
  const rendered = renderHarnessValues(spec.values)
  const secretName = harnessObjectName(name)
  const secretData = harnessSecretData(harness)
  const resources = workload.resources ?? {}
  const env = [
    { name: HarnessVariables.listen, value: `${HARNESS_HOST}:${HARNESS_PORT}` },
    { name: HarnessVariables.method, value: harness.method },
    { name: HarnessVariables.upstreams, value: JSON.stringify(rendered.upstreams) },
    ...(harness.egress === undefined ? [] : [
      { name: HarnessVariables.egress, value: harness.egress.url },
      { name: HarnessVariables.placeholder, value: harness.egress.placeholder }
    ])
  ]
  return {
    values: rendered.values,
    secretData,
    secret: {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: secretName, namespace, labels },
      type: "Opaque",
      data: Object.fromEntries(Object.entries(secretData).map(([key, value]) => [key, Buffer.from(value, "utf8").toString("base64")]))
    } as KubernetesObject,
    container: {
      name: HARNESS_CONTAINER,
      image: workload.image ?? defaultHarnessImage,
      args: ["harness"],
      env,
      envFrom: [{ secretRef: { name: secretName } }],
      resources: {
        requests: { cpu: resources.cpuRequest ?? "50m", memory: resources.memoryRequest ?? "64Mi" },
        limits: { cpu: resources.cpuLimit ?? "500m", memory: resources.memoryLimit ?? "256Mi" }
      },
      securityContext: containerSecurity
    }
  }
}
