/**
 * Plain JSON over the Kubernetes REST API with the kubeconfig's credentials and TLS settings
 * (`KubeConfig.applyToHTTPSOptions`). The generated typed clients rename fields on the way out
 * (`default` becomes `_default`, `from` `_from`, ...) and would drop them from the plain
 * manifests this driver applies; the REST API takes them as they are.
 */
import * as http from "node:http"
import * as https from "node:https"
import type { KubeConfig } from "@kubernetes/client-node"

export class KubernetesApiError extends Error {
  constructor(readonly status: number, readonly body: string) {
    super(`Kubernetes API answered ${status}`)
  }
}

export interface ResourcePath {
  readonly apiVersion: string
  readonly kind: string
  readonly namespace?: string | undefined
  readonly name?: string | undefined
  /** A subresource such as `status` or `binding`. */
  readonly subresource?: string | undefined
}

/** The plural resource name of each kind this project uses (no discovery round trips). */
const PLURALS: Record<string, string> = {
  Namespace: "namespaces",
  Node: "nodes",
  Pod: "pods",
  Secret: "secrets",
  ConfigMap: "configmaps",
  Service: "services",
  Endpoints: "endpoints",
  PersistentVolumeClaim: "persistentvolumeclaims",
  ResourceQuota: "resourcequotas",
  LimitRange: "limitranges",
  NetworkPolicy: "networkpolicies",
  Deployment: "deployments",
  ReplicaSet: "replicasets"
}

export const resourceUrlPath = (resource: ResourcePath): string => {
  const plural = PLURALS[resource.kind]
  if (plural === undefined) throw new Error(`unsupported kind ${resource.kind}`)
  const group = resource.apiVersion.includes("/") ? `/apis/${resource.apiVersion}` : `/api/${resource.apiVersion}`
  const namespace = resource.namespace === undefined ? "" : `/namespaces/${encodeURIComponent(resource.namespace)}`
  const name = resource.name === undefined ? "" : `/${encodeURIComponent(resource.name)}`
  const sub = resource.subresource === undefined ? "" : `/${resource.subresource}`
  return `${group}${namespace}/${plural}${name}${sub}`
}

export interface RestRequest {
  readonly method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE"
  readonly path: string
  readonly body?: unknown
  readonly contentType?: string | undefined
  readonly timeoutMs?: number | undefined
}

/** One request; resolves with the parsed JSON answer, rejects with `KubernetesApiError` on a 4xx/5xx. */
export const restRequest = async (config: KubeConfig, request: RestRequest): Promise<unknown> => {
  const cluster = config.getCurrentCluster()
  if (cluster === null) throw new Error("the kubeconfig has no current cluster")
  const url = new URL(request.path, cluster.server)
  const payload = request.body === undefined ? undefined : Buffer.from(JSON.stringify(request.body))
  const options: https.RequestOptions = {
    method: request.method,
    // A length, not chunks: the API server ignores a chunked body on DELETE.
    headers: {
      accept: "application/json",
      ...(payload === undefined ? {} : { "content-type": request.contentType ?? "application/json", "content-length": payload.length })
    }
  }
  await config.applyToHTTPSOptions(options)
  const transport = url.protocol === "https:" ? https : http
  return new Promise((resolve, reject) => {
    const outgoing = transport.request(url, { ...options, timeout: request.timeoutMs ?? 30_000 }, (response) => {
      const chunks: Array<Buffer> = []
      response.on("data", (chunk: Buffer) => chunks.push(chunk))
      response.on("error", reject)
      response.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8")
        const status = response.statusCode ?? 0
        if (status >= 400) return reject(new KubernetesApiError(status, text.slice(0, 2000)))
        try {
          resolve(text === "" ? undefined : JSON.parse(text))
        } catch (cause) {
          reject(cause)
        }
      })
    })
    outgoing.on("timeout", () => outgoing.destroy(new Error("the Kubernetes API did not answer in time")))
    outgoing.on("error", reject)
    if (payload !== undefined) outgoing.write(payload)
    outgoing.end()
  })
}
