/**
 * What an Agent's gateway is made of on Kubernetes (DESIGN §14), as manifests (pure): a Secret
 * with the revision's delivered values and the gateway token (never in the Deployment or a
 * ConfigMap), a ConfigMap with `openclaw.json` rendered by the same renderer and enforced
 * settings as `local`, a volume for state and workspace, a ClusterIP Service, and a Deployment
 * of one replica with the `Recreate` strategy, so two gateways of one Agent never run at once.
 * Pods run as non-root with a read-only root filesystem, no capabilities, the runtime's default
 * seccomp profile and no service-account token.
 */
import { createHash } from "node:crypto"
import type { KubernetesObject } from "@kubernetes/client-node"
import { Redacted } from "effect"
import type { GatewaySpec } from "../driver.js"
import { type JsonObject, renderGatewayConfig, serializeGatewayConfig } from "../local/gatewayConfig.js"
import { RuntimeVersions } from "../local/runtime.js"
import { workspaceFile } from "../local/workspaceFiles.js"
import { harnessParts, type HarnessWorkload } from "./harnessObjects.js"
import { agentLabels, agentObjectName, GATEWAY_PORT, LABELS, revisionLabels } from "./names.js"
import { pairingContainer, type ServiceDevice } from "./pairingObjects.js"
import type { RepositoryMount } from "./repositoryObjects.js"

/** Where the Pod keeps its state; the PVC is mounted here. */
export const DATA_DIR = "/data"
export const WORKSPACE_DIR = `${DATA_DIR}/workspace`
export const CONFIG_DIR = "/etc/openclaw"
export const CONFIG_FILE = "openclaw.json"
export const TOKEN_VARIABLE = "OPENCLAW_GATEWAY_TOKEN"
/** Where the init container finds the revision's initial workspace files (one JSON document). */
export const FILES_DIR = "/etc/svc-files"
export const FILES_KEY = "files.json"
const GATEWAY_UID = 1000

/** A container's requests and limits, as operators configure them. */
export interface ContainerResources {
  readonly cpuRequest?: string | undefined
  readonly memoryRequest?: string | undefined
  readonly cpuLimit?: string | undefined
  readonly memoryLimit?: string | undefined
}

export interface GatewayWorkload {
  readonly image?: string | undefined
  readonly resources?: (ContainerResources & { readonly storage?: string | undefined }) | undefined
  readonly storageClassName?: string | undefined
  /** Labels the Deployment with its owner (`LABELS.scope`) when set. */
  readonly scope?: string | undefined
  /** Dedicated execution's harness container (`harnessObjects.ts`). */
  readonly harnessImage?: string | undefined
  readonly harnessResources?: HarnessWorkload["resources"]
  /** The service's device, approved by the Pod's `pairing` container (`pairingObjects.ts`); none: no container. */
  readonly serviceDevice?: ServiceDevice | undefined
}

export const defaultImage = `ghcr.io/openclaw/openclaw:${RuntimeVersions.openclaw}`

/** The rendered `openclaw.json`: `local`'s document, listening on the Pod's network for its Service. */
export const renderPodGatewayConfig = (values: Readonly<Record<string, unknown>>): string => {
  const rendered = renderGatewayConfig(values as JsonObject, {
    port: GATEWAY_PORT,
    workspace: WORKSPACE_DIR,
    logFile: `${DATA_DIR}/logs/openclaw.log`
  })
  const gateway = rendered.gateway as JsonObject
  return serializeGatewayConfig({ ...rendered, gateway: { ...gateway, bind: "lan" } })
}

/** The gateway's fixed environment (as `local`'s, with the Pod's paths). */
export const podEnvironment: ReadonlyArray<{ readonly name: string; readonly value: string }> = [
  { name: "HOME", value: `${DATA_DIR}/home` },
  { name: "TMPDIR", value: "/tmp" },
  { name: "LANG", value: "C.UTF-8" },
  { name: "OPENCLAW_STATE_DIR", value: `${DATA_DIR}/state` },
  { name: "OPENCLAW_CONFIG_PATH", value: `${CONFIG_DIR}/${CONFIG_FILE}` },
  { name: "OPENCLAW_NO_RESPAWN", value: "1" },
  { name: "OPENCLAW_SKIP_CHANNELS", value: "1" },
  { name: "OPENCLAW_DISABLE_BONJOUR", value: "1" },
  { name: "OPENCLAW_NO_AUTO_UPDATE", value: "1" },
  { name: "OPENCLAW_CONFIG_READONLY", value: "1" },
  { name: "npm_config_offline", value: "true" },
  { name: "DO_NOT_TRACK", value: "1" }
]

const hash = (text: string) => createHash("sha256").update(text).digest("hex").slice(0, 16)

/**
 * The init container that puts `initialWorkspaceFiles` in the volume's workspace before the
 * gateway's first execution (SPEC 4.4 rule 3), with the gateway image's Node.js. It only creates
 * files that do not exist yet (`wx`): a Pod of the same revision that starts again never replays
 * them over the Agent's later edits.
 */
const COPY_FILES = [
  "const fs=require('fs'),path=require('path');",
  "const files=JSON.parse(fs.readFileSync(process.env.SVC_FILES,'utf8'));",
  "for(const [name,content] of Object.entries(files)){",
  "const target=path.join(process.env.SVC_WORKSPACE,name);",
  "fs.mkdirSync(path.dirname(target),{recursive:true});",
  "try{fs.writeFileSync(target,content,{flag:'wx',mode:0o600})}catch(e){if(e.code!=='EEXIST')throw e}}"
].join("")

/** The files a revision places (names `local` accepts; others are skipped, as there). */
export const initialFilesOf = (spec: GatewaySpec): Record<string, string> | undefined => {
  const files = Object.entries(spec.initialFiles ?? {}).filter(([name]) => workspaceFile(WORKSPACE_DIR, name) !== undefined)
  return files.length === 0 ? undefined : Object.fromEntries(files)
}

export const filesObjectName = (name: string) => `${name}-files`

export interface AgentManifests {
  /** The initial workspace files, when the revision has any. */
  readonly files: KubernetesObject | undefined
  readonly secret: KubernetesObject
  /** The harness Secret `<agent>-harness`, for a dedicated revision with a harness. */
  readonly harnessSecret: KubernetesObject | undefined
  readonly configMap: KubernetesObject
  readonly volume: KubernetesObject
  readonly service: KubernetesObject
  readonly deployment: KubernetesObject
}

export const agentManifests = (
  spec: GatewaySpec,
  namespace: string,
  token: string,
  workload: GatewayWorkload,
  /** The revision's repository client material (`repositoryObjects.ts`): mounted into the gateway container only. */
  repositories?: RepositoryMount | undefined
): AgentManifests => {
  const name = agentObjectName(spec.agentId)
  const labels = { ...revisionLabels(spec), ...(workload.scope === undefined ? {} : { [LABELS.scope]: workload.scope }) }
  const selector = agentLabels(spec)
  const metadata = { name, namespace, labels }
  const harness = harnessParts(spec, namespace, name, labels, { image: workload.harnessImage, resources: workload.harnessResources })
  const config = renderPodGatewayConfig(harness?.values ?? spec.values)
  const secretData: Record<string, string> = { [TOKEN_VARIABLE]: token }
  // The repository variables are the container's own (paths, not secrets): not in the Secret.
  const repositoryNames = new Set(repositories?.env.map((variable) => variable.name))
  for (const [variable, value] of Object.entries(spec.env)) if (!repositoryNames.has(variable)) secretData[variable] = Redacted.value(value)
  const resources = workload.resources ?? {}
  const files = initialFilesOf(spec)
  const filesName = filesObjectName(name)
  const containerSecurity = {
    runAsNonRoot: true,
    allowPrivilegeEscalation: false,
    readOnlyRootFilesystem: true,
    capabilities: { drop: ["ALL"] }
  }
  const image = workload.image ?? defaultImage
  return {
    files: files === undefined ? undefined : {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: filesName, namespace, labels },
      data: { [FILES_KEY]: JSON.stringify(files) }
    } as KubernetesObject,
    secret: { apiVersion: "v1", kind: "Secret", metadata, type: "Opaque", stringData: secretData } as KubernetesObject,
    harnessSecret: harness?.secret,
    configMap: { apiVersion: "v1", kind: "ConfigMap", metadata, data: { [CONFIG_FILE]: config } } as KubernetesObject,
    volume: {
      apiVersion: "v1",
      kind: "PersistentVolumeClaim",
      // The volume outlives revisions: labelled with the Agent only.
      metadata: { name, namespace, labels: selector },
      spec: {
        accessModes: ["ReadWriteOnce"],
        resources: { requests: { storage: resources.storage ?? "1Gi" } },
        ...(workload.storageClassName === undefined ? {} : { storageClassName: workload.storageClassName })
      }
    } as KubernetesObject,
    service: {
      apiVersion: "v1",
      kind: "Service",
      metadata,
      spec: {
        type: "ClusterIP",
        selector,
        ports: [{ name: "gateway", protocol: "TCP", port: GATEWAY_PORT, targetPort: GATEWAY_PORT }]
      }
    } as KubernetesObject,
    deployment: {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata,
      spec: {
        replicas: 1,
        strategy: { type: "Recreate" },
        selector: { matchLabels: selector },
        template: {
          // The hash rolls the Pod when the Secret's values change, without carrying them.
          metadata: {
            labels,
            annotations: {
              "svc/inputs": hash(`${config}\n${JSON.stringify(Object.keys(secretData).sort())}\n${hash(JSON.stringify(secretData))}${files === undefined ? "" : `\n${JSON.stringify(files)}`}${harness === undefined ? "" : `\n${hash(JSON.stringify(harness.secretData))}`}`)
            }
          },
          spec: {
            automountServiceAccountToken: false,
            enableServiceLinks: false,
            securityContext: {
              runAsNonRoot: true,
              runAsUser: GATEWAY_UID,
              runAsGroup: GATEWAY_UID,
              fsGroup: GATEWAY_UID,
              seccompProfile: { type: "RuntimeDefault" }
            },
            ...(files === undefined ? {} : {
              initContainers: [{
                name: "workspace-files",
                image,
                command: ["node", "-e", COPY_FILES],
                env: [{ name: "SVC_FILES", value: `${FILES_DIR}/${FILES_KEY}` }, { name: "SVC_WORKSPACE", value: WORKSPACE_DIR }],
                resources: { requests: { cpu: "50m", memory: "64Mi" }, limits: { cpu: "500m", memory: "256Mi" } },
                securityContext: containerSecurity,
                volumeMounts: [{ name: "files", mountPath: FILES_DIR, readOnly: true }, { name: "data", mountPath: DATA_DIR }]
              }]
            }),
            containers: [{
              name: "gateway",
              image,
              args: ["gateway", "run", "--port", String(GATEWAY_PORT), "--bind", "lan"],
              ports: [{ name: "gateway", containerPort: GATEWAY_PORT, protocol: "TCP" }],
              env: [...podEnvironment, ...(repositories?.env ?? [])],
              envFrom: [{ secretRef: { name } }],
              resources: {
                requests: { cpu: resources.cpuRequest ?? "250m", memory: resources.memoryRequest ?? "1Gi" },
                limits: { cpu: resources.cpuLimit ?? "2", memory: resources.memoryLimit ?? "2Gi" }
              },
              readinessProbe: { httpGet: { path: "/readyz", port: GATEWAY_PORT }, periodSeconds: 5 },
              livenessProbe: { httpGet: { path: "/healthz", port: GATEWAY_PORT }, initialDelaySeconds: 120, periodSeconds: 20 },
              securityContext: containerSecurity,
              volumeMounts: [
                { name: "config", mountPath: CONFIG_DIR, readOnly: true },
                { name: "data", mountPath: DATA_DIR },
                { name: "tmp", mountPath: "/tmp" },
                ...(repositories === undefined ? [] : [repositories.mount])
              ]
            }, ...(harness === undefined ? [] : [harness.container]),
            ...(workload.serviceDevice === undefined ? [] : [pairingContainer(name, TOKEN_VARIABLE, workload.serviceDevice, workload.harnessImage)])],
            volumes: [
              { name: "config", configMap: { name } },
              { name: "data", persistentVolumeClaim: { claimName: name } },
              { name: "tmp", emptyDir: {} },
              ...(files === undefined ? [] : [{ name: "files", configMap: { name: filesName } }]),
              ...(repositories === undefined ? [] : [repositories.volume])
            ]
          }
        }
      }
    } as KubernetesObject
  }
}

export const revisionOf = (object: KubernetesObject | undefined): string | undefined => object?.metadata?.labels?.[LABELS.revisionId]
