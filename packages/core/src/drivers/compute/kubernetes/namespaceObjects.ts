/**
 * What a Namespace gets in its Kubernetes namespace (DESIGN §14), as manifests (pure):
 * a ResourceQuota and LimitRange bounding what its Agents may use, and NetworkPolicies that deny
 * everything but DNS, HTTPS to public addresses (model providers), and the control plane's
 * traffic to gateways. No policy admits another tenant's namespace, so two Namespaces' gateways
 * cannot reach each other.
 */
import type { KubernetesObject } from "@kubernetes/client-node"
import type { NamespaceRuntime } from "../driver.js"
import { GATEWAY_PORT, kubernetesNamespace, LABELS, MANAGED_BY, namespaceLabels } from "./names.js"

/** Label the operator puts on the namespace the service runs in (README: operator guide). */
export const CONTROL_PLANE_LABEL = "svc/control-plane"

/** Private, link-local and carrier-grade NAT ranges: cluster internals and cloud metadata. */
export const PRIVATE_RANGES = ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "169.254.0.0/16", "100.64.0.0/10"]

export const NAMESPACE_OBJECTS = {
  quota: { apiVersion: "v1", kind: "ResourceQuota", name: "svc-quota" },
  limits: { apiVersion: "v1", kind: "LimitRange", name: "svc-limits" },
  denyAll: { apiVersion: "networking.k8s.io/v1", kind: "NetworkPolicy", name: "svc-default-deny" },
  dns: { apiVersion: "networking.k8s.io/v1", kind: "NetworkPolicy", name: "svc-allow-dns" },
  egress: { apiVersion: "networking.k8s.io/v1", kind: "NetworkPolicy", name: "svc-gateway-egress" },
  ingress: { apiVersion: "networking.k8s.io/v1", kind: "NetworkPolicy", name: "svc-gateway-ingress" },
  /** Applied with the first repository client material (`repositoryObjects.ts`), removed with the others. */
  repositoryEgress: { apiVersion: "networking.k8s.io/v1", kind: "NetworkPolicy", name: "svc-repository-egress" }
} as const

export const namespaceManifest = (namespace: NamespaceRuntime): KubernetesObject => ({
  apiVersion: "v1",
  kind: "Namespace",
  metadata: { name: kubernetesNamespace(namespace), labels: namespaceLabels(namespace) }
})

export const gatewayPods = { matchLabels: { [LABELS.managedBy]: MANAGED_BY, [LABELS.component]: "gateway" } }

/** Every object but the namespace itself, in the order they are applied. */
export const namespaceObjects = (namespace: NamespaceRuntime): ReadonlyArray<KubernetesObject> => {
  const metadata = (name: string) => ({
    name,
    namespace: kubernetesNamespace(namespace),
    labels: { [LABELS.managedBy]: MANAGED_BY, [LABELS.namespaceId]: namespace.id }
  })
  const policy = (name: string, spec: Record<string, unknown>): KubernetesObject =>
    ({ apiVersion: "networking.k8s.io/v1", kind: "NetworkPolicy", metadata: metadata(name), spec }) as KubernetesObject
  return [
    {
      apiVersion: "v1",
      kind: "ResourceQuota",
      metadata: metadata(NAMESPACE_OBJECTS.quota.name),
      spec: {
        hard: {
          pods: "50",
          "requests.cpu": "16",
          "requests.memory": "64Gi",
          "limits.memory": "128Gi",
          persistentvolumeclaims: "50",
          "requests.storage": "500Gi",
          "services.loadbalancers": "0",
          "services.nodeports": "0"
        }
      }
    } as KubernetesObject,
    {
      apiVersion: "v1",
      kind: "LimitRange",
      metadata: metadata(NAMESPACE_OBJECTS.limits.name),
      spec: {
        limits: [{
          type: "Container",
          default: { cpu: "2", memory: "2Gi" },
          defaultRequest: { cpu: "250m", memory: "1Gi" },
          max: { cpu: "4", memory: "8Gi" }
        }]
      }
    } as KubernetesObject,
    policy(NAMESPACE_OBJECTS.denyAll.name, { podSelector: {}, policyTypes: ["Ingress", "Egress"] }),
    policy(NAMESPACE_OBJECTS.dns.name, {
      podSelector: {},
      policyTypes: ["Egress"],
      egress: [{
        to: [{ namespaceSelector: {}, podSelector: { matchLabels: { "k8s-app": "kube-dns" } } }],
        ports: [{ protocol: "UDP", port: 53 }, { protocol: "TCP", port: 53 }]
      }]
    }),
    policy(NAMESPACE_OBJECTS.egress.name, {
      podSelector: gatewayPods,
      policyTypes: ["Egress"],
      egress: [{ to: [{ ipBlock: { cidr: "0.0.0.0/0", except: PRIVATE_RANGES } }], ports: [{ protocol: "TCP", port: 443 }] }]
    }),
    policy(NAMESPACE_OBJECTS.ingress.name, {
      podSelector: gatewayPods,
      policyTypes: ["Ingress"],
      ingress: [{
        from: [{ namespaceSelector: { matchLabels: { [CONTROL_PLANE_LABEL]: "true" } } }],
        ports: [{ protocol: "TCP", port: GATEWAY_PORT }]
      }]
    })
  ]
}
