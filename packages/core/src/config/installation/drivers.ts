/**
 * Driver selection (SPEC 1.5): one implementation per Installation-level Driver. Each selection
 * is an object `{ id, ...settings }`. IAM, Compute and Secret always have one (defaults
 * `builtin`, `local`, `builtin`); Plugin, ServiceAccount, Repo, Credential Gateway and Sandbox
 * are absent unless configured.
 */
import { Schema } from "effect"
import { AbsolutePath, boundedInt, HttpsUrl, Identifier } from "./fields.js"

export const IamDriver = Schema.Struct({ id: Schema.Literal("builtin") })

export const LocalCompute = Schema.Struct({ id: Schema.Literal("local") })

/** A Kubernetes quantity (`250m`, `1Gi`, `2`). */
const Quantity = Schema.String.pipe(
  Schema.pattern(/^[0-9]+(\.[0-9]+)?(m|k|Ki|Mi|Gi|Ti|M|G|T)?$/, { message: () => "must be a Kubernetes quantity such as 500m or 1Gi" })
)

/** A Kubernetes label value: at most 63 characters, alphanumeric at both ends. */
const LabelValue = Schema.String.pipe(
  Schema.pattern(/^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/, {
    message: () => "must be a Kubernetes label value (at most 63 letters, digits, '-', '_' or '.', alphanumeric at both ends)"
  })
)

/** An http(s) origin: no user name, password, path, query or fragment. */
const ListenerOrigin = Schema.String.pipe(
  Schema.filter((s) => URL.canParse(s) && /^https?:$/.test(new URL(s).protocol) && new URL(s).origin === s.replace(/\/$/, ""), {
    message: () => "must be an http(s) origin such as http://svc-credentials.svc-system.svc.cluster.local:8181"
  })
)

export const KubernetesCompute = Schema.Struct({
  id: Schema.Literal("kubernetes"),
  /** A kubeconfig file; absent: in-cluster service account credentials. */
  kubeconfigPath: Schema.optionalWith(AbsolutePath, { exact: true }),
  /** A context of that kubeconfig; absent: its current context. */
  context: Schema.optionalWith(Identifier, { exact: true }),
  /** The gateway container image (default: the OpenClaw image of the pinned runtime version). */
  image: Schema.optionalWith(Identifier, { exact: true }),
  /** Gateway container resources (defaults: 250m/1Gi requested, 2 CPU/2Gi limit). */
  resources: Schema.optionalWith(
    Schema.Struct({
      cpuRequest: Schema.optionalWith(Quantity, { exact: true }),
      memoryRequest: Schema.optionalWith(Quantity, { exact: true }),
      cpuLimit: Schema.optionalWith(Quantity, { exact: true }),
      memoryLimit: Schema.optionalWith(Quantity, { exact: true }),
      storage: Schema.optionalWith(Quantity, { exact: true })
    }),
    { exact: true }
  ),
  /**
   * Dedicated execution's `harness` container (the model credential proxy, `svc harness`): an
   * image whose entry point is `svc` (default `ghcr.io/svc/svc:0.1.0`), and its resources
   * (defaults: 50m/64Mi requested, 500m/256Mi limit). The same image runs every Agent Pod's
   * `pairing` container (`svc gateway-pairing`, docs/decisions/kubernetes.md "Device pairing").
   */
  harnessImage: Schema.optionalWith(Identifier, { exact: true }),
  harnessResources: Schema.optionalWith(
    Schema.Struct({
      cpuRequest: Schema.optionalWith(Quantity, { exact: true }),
      memoryRequest: Schema.optionalWith(Quantity, { exact: true }),
      cpuLimit: Schema.optionalWith(Quantity, { exact: true }),
      memoryLimit: Schema.optionalWith(Quantity, { exact: true })
    }),
    { exact: true }
  ),
  /** The storage class of each Agent's volume; absent: the cluster's default. */
  storageClassName: Schema.optionalWith(Identifier, { exact: true }),
  /** The cluster's DNS domain the service reaches gateway Services under (default `cluster.local`). */
  clusterDomain: Schema.optionalWith(Identifier, { exact: true }),
  /**
   * How the service reaches gateways: `serviceDns` (it runs in the cluster) or `apiServerProxy`
   * (the API server's Service proxy, from outside). Absent: `apiServerProxy` with a kubeconfig,
   * `serviceDns` with in-cluster credentials.
   */
  endpoints: Schema.optionalWith(Schema.Literal("serviceDns", "apiServerProxy"), { exact: true }),
  /**
   * This instance's label (`svc/scope`) on its gateways, when several instances share a cluster:
   * each one's orphan sweep then sees only its own gateways.
   */
  scope: Schema.optionalWith(LabelValue, { exact: true }),
  /**
   * The credential service's client listener as the Agents' Pods reach it (an http(s) origin,
   * e.g. its in-cluster Service `http://svc-credentials.svc-system.svc.cluster.local:8181`).
   * Absent: revisions with repository grants cannot be deployed (`NOT_IMPLEMENTED`).
   */
  repositoryListenerUrl: Schema.optionalWith(ListenerOrigin, { exact: true })
})

export const ComputeDriver = Schema.Union(LocalCompute, KubernetesCompute)

export const SecretDriver = Schema.Struct({ id: Schema.Literal("builtin") })

/** A Driver with no Installation-level settings of its own. */
export const NamedDriver = Schema.Struct({ id: Identifier })

/**
 * DESIGN §15: the `bundled` Plugin Driver, a curated catalog of OpenClaw plugins pinned by
 * version and integrity. `registry` is where their tarballs are fetched (an npm registry or a
 * mirror of it; default the public npm registry); what is fetched is checked against the pinned
 * integrity whatever the source.
 */
export const PluginDriver = Schema.Struct({
  id: Schema.Literal("bundled"),
  registry: Schema.optionalWith(HttpsUrl, { exact: true })
})

/** SPEC 2.15: the Repo Driver carries its own settings, never the code-host App key. */
export const RepoDriver = Schema.Struct({
  id: Identifier,
  /** The credential service's private control socket. */
  controlSocket: AbsolutePath,
  sessionDurationSeconds: boundedInt(60, 86400),
  publicCaPath: AbsolutePath
})

export const Drivers = Schema.Struct({
  iam: Schema.optionalWith(IamDriver, { exact: true, default: () => ({ id: "builtin" as const }) }),
  compute: Schema.optionalWith(ComputeDriver, { exact: true, default: () => ({ id: "local" as const }) }),
  secret: Schema.optionalWith(SecretDriver, { exact: true, default: () => ({ id: "builtin" as const }) }),
  plugin: Schema.optionalWith(PluginDriver, { exact: true }),
  serviceAccount: Schema.optionalWith(NamedDriver, { exact: true }),
  repo: Schema.optionalWith(RepoDriver, { exact: true }),
  credentialGateway: Schema.optionalWith(NamedDriver, { exact: true }),
  sandbox: Schema.optionalWith(NamedDriver, { exact: true })
})

export type Drivers = typeof Drivers.Type

export const defaultDrivers: Drivers = {
  iam: { id: "builtin" },
  compute: { id: "local" },
  secret: { id: "builtin" }
}
