/**
 * Repository client material on Kubernetes (DESIGN §12; docs/decisions/kubernetes.md "Repository
 * client material"), as manifests (pure): one Secret per revision,
 * `agent-<hash>-repositories-<hash of the revision id>`, holding one bearer per repository
 * (`bearer_<owner>_<name>`), a Git credential helper that hands Git the bearer of the repository
 * it asks about, a `gitconfig` rewriting `https://github.com/` to the credential service's client
 * listener (the `repositoryListenerUrl` setting: its address as the Pods reach it) and the
 * code-host CLI's `hosts.yml`. The gateway container alone mounts it, read-only, files 0440
 * (`defaultMode`, readable by the Pod's group), at `REPOSITORIES_DIR`. No path inside the files:
 * the helper is found beside `GIT_CONFIG_GLOBAL` and finds the bearers beside itself, so the
 * material works wherever it is projected. Session ids are in an annotation; bearers only in `data`.
 */
import { createHash } from "node:crypto"
import type { KubernetesObject, V1Container, V1Secret, V1Volume } from "@kubernetes/client-node"
import type { GatewayRef } from "../driver.js"
import { gitConfig, helperScript, hostsYaml } from "../local/repositoryClients.js"
import { agentObjectName, LABELS, MANAGED_BY, revisionLabels } from "./names.js"
import { CONTROL_PLANE_LABEL, gatewayPods, NAMESPACE_OBJECTS } from "./namespaceObjects.js"

export const REPOSITORIES_DIR = "/etc/svc-repositories"
export const REPOSITORIES_VOLUME = "repositories"
export const REPOSITORIES_COMPONENT = "repositories"
/** `{"owner/name": "<session id>"}` on the Secret. */
export const SESSIONS_ANNOTATION = "svc/repository-sessions"
/** The listener's `host:port` the material was written for (`GH_HOST`). */
export const LISTENER_ANNOTATION = "svc/repository-listener"
/** Files readable by the owner and the Pod's group (`fsGroup`), by nobody else, never writable. */
export const REPOSITORIES_MODE = 0o440

export const repositoriesObjectName = (ref: Pick<GatewayRef, "agentId" | "revisionId">): string =>
  `${agentObjectName(ref.agentId)}-repositories-${createHash("sha256").update(ref.revisionId).digest("hex").slice(0, 10)}`

/** The labels of every repository Secret of an Agent (`revisions` lists by them). */
export const repositoriesSelector = (agentId: string): string =>
  `${LABELS.managedBy}=${MANAGED_BY},${LABELS.component}=${REPOSITORIES_COMPONENT},${LABELS.agentId}=${agentId}`

/** `owner/name` as a data key: `bearer_owner_name` (an owner has no `_`, so this is one-to-one). */
export const bearerKey = (repository: string): string => `bearer_${repository.replace("/", "_")}`

/** The helper finds the bearers beside itself. */
const helper = helperScript(`"$(dirname "$0")/bearer_"`, "_")

/** The helper beside the `gitconfig` Git reads (`GIT_CONFIG_GLOBAL`), run by `sh` (the files are not executable). */
const HELPER_COMMAND = `"!sh \\"$(dirname \\"$GIT_CONFIG_GLOBAL\\")/credential-helper\\""`

export interface RepositoryMaterial {
  /** `owner/name` → session id. */
  readonly sessions: Readonly<Record<string, string>>
  /** `owner/name` → bearer. */
  readonly bearers: Readonly<Record<string, string>>
  readonly listener: URL
}

const base64 = (text: string) => Buffer.from(text, "utf8").toString("base64")

export const repositoriesSecret = (
  ref: GatewayRef,
  namespace: string,
  material: RepositoryMaterial,
  scope: string | undefined
): KubernetesObject & V1Secret => {
  const names = Object.keys(material.bearers).sort()
  // The CLI keeps one token per host: the first repository's (by name) serves it.
  const first = material.bearers[names[0] ?? ""] ?? ""
  const data: Record<string, string> = {
    gitconfig: base64(gitConfig(material.listener.origin, HELPER_COMMAND)),
    "credential-helper": base64(helper),
    "hosts.yml": base64(hostsYaml(material.listener.host, first))
  }
  for (const name of names) data[bearerKey(name)] = base64(material.bearers[name]!)
  return {
    apiVersion: "v1",
    kind: "Secret",
    metadata: {
      name: repositoriesObjectName(ref),
      namespace,
      labels: {
        ...revisionLabels(ref),
        [LABELS.component]: REPOSITORIES_COMPONENT,
        ...(scope === undefined ? {} : { [LABELS.scope]: scope })
      },
      annotations: {
        [SESSIONS_ANNOTATION]: JSON.stringify(material.sessions),
        [LISTENER_ANNOTATION]: material.listener.host
      }
    },
    type: "Opaque",
    data
  }
}

/** The material a Secret holds (sessions whose bearer is present), or `undefined` when it is not one of ours. */
export const readMaterial = (secret: V1Secret | undefined, ref: GatewayRef): { readonly sessions: Record<string, string>; readonly bearers: Record<string, string>; readonly listenerHost: string } | undefined => {
  if (secret === undefined || secret.metadata?.labels?.[LABELS.revisionId] !== ref.revisionId) return undefined
  const annotations = secret.metadata.annotations ?? {}
  let recorded: unknown
  try {
    recorded = JSON.parse(annotations[SESSIONS_ANNOTATION] ?? "{}")
  } catch {
    recorded = {}
  }
  const sessions: Record<string, string> = {}
  const bearers: Record<string, string> = {}
  for (const [repository, sessionId] of Object.entries(typeof recorded === "object" && recorded !== null ? recorded : {})) {
    const encoded = secret.data?.[bearerKey(repository)]
    if (typeof sessionId !== "string" || encoded === undefined) continue
    sessions[repository] = sessionId
    bearers[repository] = Buffer.from(encoded, "base64").toString("utf8")
  }
  return { sessions, bearers, listenerHost: annotations[LISTENER_ANNOTATION] ?? "" }
}

/**
 * The Namespace's gateways may reach the listener: egress to the control plane's namespace
 * (`svc/control-plane=true`, where the credential service runs) on the listener's port only.
 * The other policies admit HTTPS to public addresses alone, and the listener is in the cluster.
 */
export const repositoryEgressPolicy = (namespace: string, namespaceId: string, listener: URL): KubernetesObject => ({
  apiVersion: "networking.k8s.io/v1",
  kind: "NetworkPolicy",
  metadata: {
    name: NAMESPACE_OBJECTS.repositoryEgress.name,
    namespace,
    labels: { [LABELS.managedBy]: MANAGED_BY, [LABELS.namespaceId]: namespaceId }
  },
  spec: {
    podSelector: gatewayPods,
    policyTypes: ["Egress"],
    egress: [{
      to: [{ namespaceSelector: { matchLabels: { [CONTROL_PLANE_LABEL]: "true" } } }],
      ports: [{ protocol: "TCP", port: Number(listener.port || (listener.protocol === "https:" ? 443 : 80)) }]
    }]
  }
} as KubernetesObject)

/** The gateway's environment for mounted material (paths and the listener's host only). */
export const repositoryVariables = (listenerHost: string): Record<string, string> => ({
  GIT_CONFIG_GLOBAL: `${REPOSITORIES_DIR}/gitconfig`,
  GIT_TERMINAL_PROMPT: "0",
  GH_CONFIG_DIR: REPOSITORIES_DIR,
  GH_HOST: listenerHost,
  GH_NO_UPDATE_NOTIFIER: "1"
})

/** What the Pod spec gains for a revision with material: the volume, the gateway's mount and environment. */
export interface RepositoryMount {
  readonly volume: V1Volume
  readonly mount: NonNullable<V1Container["volumeMounts"]>[number]
  readonly env: ReadonlyArray<{ readonly name: string; readonly value: string }>
}

export const repositoryMount = (secretName: string, listenerHost: string): RepositoryMount => ({
  volume: { name: REPOSITORIES_VOLUME, secret: { secretName, defaultMode: REPOSITORIES_MODE } },
  mount: { name: REPOSITORIES_VOLUME, mountPath: REPOSITORIES_DIR, readOnly: true },
  env: Object.entries(repositoryVariables(listenerHost)).map(([name, value]) => ({ name, value }))
})
