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

export const KubernetesCompute = Schema.Struct({
  id: Schema.Literal("kubernetes"),
  /** A kubeconfig file; absent: in-cluster service account credentials. */
  kubeconfigPath: Schema.optionalWith(AbsolutePath, { exact: true }),
  /** A context of that kubeconfig; absent: its current context. */
  context: Schema.optionalWith(Identifier, { exact: true })
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
