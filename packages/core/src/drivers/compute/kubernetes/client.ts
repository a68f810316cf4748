/**
 * The Kubernetes API as the driver uses it: plain objects (`rest.ts`) applied with
 * server-side apply under one field manager, read, listed and deleted, every call an Effect whose
 * failure is a safe `ComputeFailure` (the native error is only logged). Server-side apply makes
 * every write an idempotent convergence step and lets a restarted worker re-adopt what exists.
 */
import { KubeConfig, type KubernetesObject } from "@kubernetes/client-node"
import { Effect } from "effect"
import { ComputeFailure } from "../driver.js"
import { KubernetesApiError, resourceUrlPath, restRequest, type RestRequest } from "./rest.js"

export const FIELD_MANAGER = "svc"

export const KubernetesCodes = {
  CLUSTER_UNAVAILABLE: "CLUSTER_UNAVAILABLE",
  CLUSTER_REQUEST_REFUSED: "CLUSTER_REQUEST_REFUSED",
  EXISTING_NAMESPACE_NOT_FOUND: "EXISTING_NAMESPACE_NOT_FOUND",
  EXISTING_NAMESPACE_TAKEN: "EXISTING_NAMESPACE_TAKEN",
  NAMESPACE_TERMINATING: "NAMESPACE_TERMINATING",
  NAMESPACE_RUNTIME_MISSING: "NAMESPACE_RUNTIME_MISSING",
  GATEWAY_SPEC_INVALID: "GATEWAY_SPEC_INVALID",
  GATEWAY_START_TIMEOUT: "GATEWAY_START_TIMEOUT",
  GATEWAY_NOT_RUNNING: "GATEWAY_NOT_RUNNING",
  GATEWAY_UNREACHABLE: "GATEWAY_UNREACHABLE",
  RUNTIME_AUTHENTICATION_FAILED: "RUNTIME_AUTHENTICATION_FAILED",
  MODEL_PROBE_FAILED: "MODEL_PROBE_FAILED",
  WORKSPACE_UNAVAILABLE: "WORKSPACE_UNAVAILABLE",
  WORKSPACE_FILE_NOT_FOUND: "WORKSPACE_FILE_NOT_FOUND",
  WORKSPACE_PATH_INVALID: "WORKSPACE_PATH_INVALID",
  WORKSPACE_CONTENT_INVALID: "WORKSPACE_CONTENT_INVALID"
} as const

export const failure = (code: string, message: string, permanent: boolean) => new ComputeFailure({ code, message, permanent })

/** Where the driver's credentials come from (SPEC 1.5: Installation configuration). */
export interface ClusterAccess {
  readonly kubeconfigPath?: string | undefined
  readonly context?: string | undefined
}

export const loadKubeConfig = (access: ClusterAccess): KubeConfig => {
  const config = new KubeConfig()
  if (access.kubeconfigPath === undefined) config.loadFromCluster()
  else config.loadFromFile(access.kubeconfigPath)
  if (access.context !== undefined) config.setCurrentContext(access.context)
  return config
}

export const statusOf = (cause: unknown): number | undefined => (cause instanceof KubernetesApiError ? cause.status : undefined)

/** 403/422/400 from the API server cannot be fixed by retrying; anything else (network, 5xx, 409) may. */
const refused = (status: number | undefined) => status === 400 || status === 403 || status === 422

const callFailed = (operation: string, what: string) => (cause: unknown) => {
  const status = statusOf(cause)
  return Effect.logWarning("kubernetes compute: API call failed", {
    operation,
    what,
    status,
    cause: cause instanceof KubernetesApiError ? cause.body.slice(0, 500) : String(cause)
  }).pipe(
    Effect.zipRight(
      Effect.fail(
        refused(status)
          ? failure(KubernetesCodes.CLUSTER_REQUEST_REFUSED, "The Kubernetes API server refused a request of the Compute Driver.", true)
          : failure(KubernetesCodes.CLUSTER_UNAVAILABLE, "The Kubernetes API server could not be reached or did not answer.", false)
      )
    )
  )
}

export interface ObjectRef {
  readonly apiVersion: string
  readonly kind: string
  readonly name: string
  readonly namespace?: string | undefined
}

const describe = (ref: ObjectRef) => `${ref.kind} ${ref.namespace ?? ""}/${ref.name}`

const refOf = (object: KubernetesObject): ObjectRef => ({
  apiVersion: object.apiVersion ?? "v1",
  kind: object.kind ?? "",
  name: object.metadata?.name ?? "",
  namespace: object.metadata?.namespace
})

export interface Cluster {
  /** Server-side apply (forced: this driver is the owner of the fields it sets). */
  readonly apply: <T extends KubernetesObject>(object: T) => Effect.Effect<T, ComputeFailure>
  /** The object, or `undefined` when it does not exist. */
  readonly read: <T extends KubernetesObject>(ref: ObjectRef) => Effect.Effect<T | undefined, ComputeFailure>
  /** Deletes; an absent object is success. */
  readonly remove: (ref: ObjectRef) => Effect.Effect<void, ComputeFailure>
  readonly list: <T extends KubernetesObject>(
    apiVersion: string,
    kind: string,
    options: { readonly namespace?: string | undefined; readonly labelSelector?: string | undefined }
  ) => Effect.Effect<ReadonlyArray<T>, ComputeFailure>
  /** Sets a Deployment's replica count (a merge patch: the applied manifest keeps its other fields). */
  readonly scale: (ref: ObjectRef, replicas: number) => Effect.Effect<void, ComputeFailure>
  readonly config: KubeConfig
  /** Any other request (the test node binds Pods and reports their status with it). */
  readonly send: (request: RestRequest) => Effect.Effect<unknown, unknown>
}

/** A client call whose rejection stays the client's error (its HTTP status decides the mapping). */
const call = <A>(run: () => Promise<A>): Effect.Effect<A, unknown> => Effect.tryPromise({ try: run, catch: (cause) => cause })

export const makeCluster = (config: KubeConfig): Cluster => {
  const send = (request: RestRequest) => call(() => restRequest(config, request))
  const apply = <T extends KubernetesObject>(object: T) =>
    send({
      method: "PATCH",
      path: `${resourceUrlPath({ ...refOf(object) })}?fieldManager=${FIELD_MANAGER}&force=true`,
      body: object,
      contentType: "application/apply-patch+yaml"
    }).pipe(
      Effect.map((answer) => answer as T),
      Effect.catchAll(callFailed("apply", describe(refOf(object))))
    )
  const read = <T extends KubernetesObject>(ref: ObjectRef) =>
    send({ method: "GET", path: resourceUrlPath(ref) }).pipe(
      Effect.map((object) => object as T | undefined),
      Effect.catchAll((cause) => (statusOf(cause) === 404 ? Effect.succeed(undefined) : callFailed("read", describe(ref))(cause)))
    )
  const remove = (ref: ObjectRef) =>
    send({ method: "DELETE", path: `${resourceUrlPath(ref)}?propagationPolicy=Background` }).pipe(
      Effect.asVoid,
      Effect.catchAll((cause) => (statusOf(cause) === 404 ? Effect.void : callFailed("delete", describe(ref))(cause)))
    )
  const list: Cluster["list"] = <T extends KubernetesObject>(
    apiVersion: string,
    kind: string,
    options: { readonly namespace?: string | undefined; readonly labelSelector?: string | undefined }
  ) =>
    send({
      method: "GET",
      path: `${resourceUrlPath({ apiVersion, kind, namespace: options.namespace })}${
        options.labelSelector === undefined ? "" : `?labelSelector=${encodeURIComponent(options.labelSelector)}`
      }`
    }).pipe(
      Effect.map((answer): ReadonlyArray<T> => (answer as { items?: ReadonlyArray<T> }).items ?? []),
      Effect.catchAll(callFailed("list", `${kind} ${options.namespace ?? "*"}`))
    )
  const scale = (ref: ObjectRef, replicas: number) =>
    send({ method: "PATCH", path: resourceUrlPath(ref), body: { spec: { replicas } }, contentType: "application/merge-patch+json" }).pipe(
      Effect.asVoid,
      Effect.catchAll((cause) => (statusOf(cause) === 404 ? Effect.void : callFailed("scale", describe(ref))(cause)))
    )
  return { apply, read, remove, list, scale, config, send }
}
