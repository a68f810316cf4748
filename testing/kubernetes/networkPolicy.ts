/**
 * NetworkPolicy semantics (networking.k8s.io/v1) evaluated over objects read from the API server,
 * so a test can assert what the policies admit without a network plugin (none runs here): a
 * connection is admitted when the source Pod's egress and the destination Pod's ingress both
 * admit it. A Pod no policy of a direction selects is open in that direction; one that some
 * policy selects is open only to what one of their rules lists.
 */

export interface LabelSelector {
  readonly matchLabels?: Readonly<Record<string, string>>
  readonly matchExpressions?: ReadonlyArray<{ readonly key: string; readonly operator: string; readonly values?: ReadonlyArray<string> }>
}

interface Peer {
  readonly podSelector?: LabelSelector
  readonly namespaceSelector?: LabelSelector
  readonly ipBlock?: { readonly cidr: string; readonly except?: ReadonlyArray<string> }
}

interface Rule {
  readonly from?: ReadonlyArray<Peer>
  readonly to?: ReadonlyArray<Peer>
  readonly ports?: ReadonlyArray<{ readonly protocol?: string; readonly port?: number | string }>
}

export interface NetworkPolicyObject {
  readonly metadata: { readonly namespace: string; readonly name: string }
  readonly spec: {
    readonly podSelector: LabelSelector
    readonly policyTypes?: ReadonlyArray<"Ingress" | "Egress">
    readonly ingress?: ReadonlyArray<Rule>
    readonly egress?: ReadonlyArray<Rule>
  }
}

/** A Pod (or a Pod-like endpoint outside the cluster: no namespace, only an IP). */
export interface Endpoint {
  readonly namespace?: string | undefined
  readonly labels?: Readonly<Record<string, string>>
  readonly ip?: string | undefined
}

export interface Cluster {
  readonly policies: ReadonlyArray<NetworkPolicyObject>
  /** Every namespace's labels, by name. */
  readonly namespaces: ReadonlyMap<string, Readonly<Record<string, string>>>
}

export const selects = (selector: LabelSelector, labels: Readonly<Record<string, string>>): boolean =>
  Object.entries(selector.matchLabels ?? {}).every(([key, value]) => labels[key] === value) &&
  (selector.matchExpressions ?? []).every((expression) => {
    const value = labels[expression.key]
    switch (expression.operator) {
      case "In":
        return value !== undefined && (expression.values ?? []).includes(value)
      case "NotIn":
        return value === undefined || !(expression.values ?? []).includes(value)
      case "Exists":
        return value !== undefined
      case "DoesNotExist":
        return value === undefined
      default:
        throw new Error(`unknown selector operator ${expression.operator}`)
    }
  })

const ipv4 = (ip: string): number => ip.split(".").reduce((n, octet) => n * 256 + Number(octet), 0)

export const inCidr = (ip: string, cidr: string): boolean => {
  const [base, bits] = cidr.split("/")
  const size = 32 - Number(bits)
  return Math.floor(ipv4(ip) / 2 ** size) === Math.floor(ipv4(base!) / 2 ** size)
}

const peerMatches = (cluster: Cluster, policyNamespace: string, peer: Peer, other: Endpoint): boolean => {
  if (peer.ipBlock !== undefined) {
    return other.ip !== undefined && inCidr(other.ip, peer.ipBlock.cidr) &&
      !(peer.ipBlock.except ?? []).some((cidr) => inCidr(other.ip!, cidr))
  }
  if (other.namespace === undefined) return false
  const namespaceOk = peer.namespaceSelector === undefined
    ? other.namespace === policyNamespace
    : selects(peer.namespaceSelector, cluster.namespaces.get(other.namespace) ?? {})
  return namespaceOk && (peer.podSelector === undefined || selects(peer.podSelector, other.labels ?? {}))
}

const portMatches = (rule: Rule, port: number, protocol: string): boolean =>
  rule.ports === undefined || rule.ports.length === 0 ||
  rule.ports.some((p) => (p.protocol ?? "TCP") === protocol && (p.port === undefined || p.port === port))

/** Whether `pod`'s policies of one direction admit a connection with `other` on `port`. */
const admits = (
  cluster: Cluster,
  direction: "Ingress" | "Egress",
  pod: Endpoint,
  other: Endpoint,
  port: number,
  protocol: string
): boolean => {
  if (pod.namespace === undefined) return true // outside the cluster: no policy applies
  const applying = cluster.policies.filter((policy) =>
    policy.metadata.namespace === pod.namespace &&
    selects(policy.spec.podSelector, pod.labels ?? {}) &&
    (policy.spec.policyTypes ?? ["Ingress"]).includes(direction)
  )
  if (applying.length === 0) return true
  return applying.some((policy) =>
    ((direction === "Ingress" ? policy.spec.ingress : policy.spec.egress) ?? []).some((rule) => {
      const peers = direction === "Ingress" ? rule.from : rule.to
      return portMatches(rule, port, protocol) &&
        (peers === undefined || peers.length === 0 || peers.some((peer) => peerMatches(cluster, policy.metadata.namespace, peer, other)))
    })
  )
}

/** Whether the policies admit `from` opening a connection to `to` on `port`. */
export const allowed = (cluster: Cluster, from: Endpoint, to: Endpoint, port: number, protocol = "TCP"): boolean =>
  admits(cluster, "Egress", from, to, port, protocol) && admits(cluster, "Ingress", to, from, port, protocol)
