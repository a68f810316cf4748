/**
 * Dedicated execution's harness (SPEC 2.5, 4.5, 4.6; docs/decisions/kubernetes.md "Dedicated
 * execution"): the model credential proxy (`svc harness`) that runs next to an Agent's gateway
 * and holds the credential the gateway must never see. The gateway's model providers are
 * rewritten to reach the proxy on the Pod's loopback with a fixed placeholder key; the proxy
 * forwards to each provider's original base URL and adds the credential. Pure: the names both
 * sides agree on and the rendering of the gateway's values.
 */
import { Redacted } from "effect"

/** Where the proxy listens, inside the Pod's network namespace only. */
export const HARNESS_HOST = "127.0.0.1"
export const HARNESS_PORT = 18790
export const harnessOrigin = (port: number = HARNESS_PORT) => `http://${HARNESS_HOST}:${port}`

/** The key the gateway sends: never a credential; the proxy drops it. */
export const HARNESS_PLACEHOLDER = "svc-harness-placeholder"

/** The header carrying a managed access token's workspace (provider_service_account, SPEC 4.5). */
export const WORKSPACE_HEADER = "x-workspace-id"

/** The harness container's environment, as the proxy reads it. */
export const HarnessVariables = {
  /** `host:port` to listen on (default `127.0.0.1:18790`). */
  listen: "SVC_HARNESS_LISTEN",
  /** JSON `{providerId: baseUrl}`: the providers' original base URLs. */
  upstreams: "SVC_HARNESS_UPSTREAMS",
  method: "SVC_HARNESS_METHOD",
  /** From the harness Secret only: the bearer credential (direct_token, provider_service_account). */
  token: "SVC_HARNESS_TOKEN",
  /** From the harness Secret only: the managed access token's `workspace-id`. */
  workspaceId: "SVC_HARNESS_WORKSPACE_ID",
  /** credential_source: the Credential Gateway's egress proxy (`http://host:port`). */
  egress: "SVC_HARNESS_EGRESS",
  /** credential_source: the placeholder the egress swaps for the source's key. */
  placeholder: "SVC_HARNESS_PLACEHOLDER"
} as const

export type HarnessMethod = "direct_token" | "provider_service_account" | "credential_source"

/** What a dedicated revision's harness needs; see `GatewaySpec.harness`. */
export interface HarnessSpec {
  readonly method: HarnessMethod
  /** Credentials for the harness container only (never the gateway's): `HarnessVariables` names. */
  readonly env: Readonly<Record<string, Redacted.Redacted<string>>>
  /** credential_source: the egress the harness sends through, and the placeholder it sends. */
  readonly egress?: { readonly url: string; readonly placeholder: string } | undefined
}

/**
 * credential_source's placeholder (our assumption about OpenShell egress, in the decision note):
 * the egress replaces a bearer `svc-credential-source:<provider name>` with the key of the
 * provider registered under that name (the source's id) and forwards.
 */
export const credentialSourcePlaceholder = (sourceId: string) => `svc-credential-source:${sourceId}`

type JsonObject = { [key: string]: unknown }
const isObject = (value: unknown): value is JsonObject => typeof value === "object" && value !== null && !Array.isArray(value)

export interface HarnessRendering {
  /** The values with every provider pointed at the harness with the placeholder key. */
  readonly values: JsonObject
  /** Each provider's original base URL, for the harness. */
  readonly upstreams: Readonly<Record<string, string>>
}

/**
 * Points every model provider of `values` (`models.providers.<id>`) that has a `baseUrl` at
 * `<origin>/providers/<id>` with `apiKey` the placeholder. A provider without a `baseUrl` is
 * left as it is (the gateway would use its built-in endpoint, which the harness does not serve).
 */
export const renderHarnessValues = (values: Readonly<Record<string, unknown>>, origin: string = harnessOrigin()): HarnessRendering => {
  const models = isObject(values.models) ? values.models : {}
  const providers = isObject(models.providers) ? models.providers : {}
  const upstreams: Record<string, string> = {}
  const rewritten: JsonObject = {}
  for (const [id, provider] of Object.entries(providers)) {
    if (!isObject(provider) || typeof provider.baseUrl !== "string") {
      rewritten[id] = provider
      continue
    }
    upstreams[id] = provider.baseUrl
    rewritten[id] = { ...provider, baseUrl: `${origin}/providers/${encodeURIComponent(id)}`, apiKey: HARNESS_PLACEHOLDER }
  }
  return { values: { ...values, models: { ...models, providers: rewritten } }, upstreams }
}

/**
 * Every base URL `values` gives a model provider: where a credential the platform delivers for
 * model calls can be sent (the harness's upstreams; the gateway's own calls with `api_key`).
 * Admission compares these before and after a change (docs/decisions/configurations.md
 * "Model-credential endpoints").
 */
export const modelProviderEndpoints = (values: Readonly<Record<string, unknown>>): ReadonlySet<string> =>
  new Set(Object.values(renderHarnessValues(values).upstreams))

/** Whether `after` names a model-provider base URL that `before` did not. */
export const introducesModelEndpoint = (before: Readonly<Record<string, unknown>>, after: Readonly<Record<string, unknown>>): boolean => {
  const known = modelProviderEndpoints(before)
  return [...modelProviderEndpoints(after)].some((url) => !known.has(url))
}

/** The harness Secret's values, revealed for a manifest (only the driver calls this). */
export const harnessSecretData = (spec: HarnessSpec): Record<string, string> =>
  Object.fromEntries(Object.entries(spec.env).map(([name, value]) => [name, Redacted.value(value)]))
