/**
 * The `pairing` container of every Agent Pod (docs/decisions/kubernetes.md "Device pairing"):
 * `svc gateway-pairing` from the service's own image (`harnessImage`), approving on the Pod's
 * loopback the service's device (`pairing.ts`) and nothing else. It gets the gateway token alone
 * from the Agent's Secret (never the Agent's other variables), its own UID, a read-only root
 * filesystem, no capabilities, no port and no mounts. Pure manifest; `agentObjects.ts` places it.
 */
import type { V1Container } from "@kubernetes/client-node"
import { PairingVariables } from "../pairing.js"
import { defaultHarnessImage } from "./harnessObjects.js"
import { GATEWAY_PORT } from "./names.js"

export const PAIRING_CONTAINER = "pairing"
/** Neither the gateway's (1000) nor the harness's (1001). */
export const PAIRING_UID = 1002

export interface ServiceDevice {
  /** The service's device id (not secret): the only one the container approves. */
  readonly id: string
  readonly scopes: ReadonlyArray<string>
}

export const pairingContainer = (
  secretName: string,
  tokenVariable: string,
  device: ServiceDevice,
  image: string | undefined
): V1Container => ({
  name: PAIRING_CONTAINER,
  image: image ?? defaultHarnessImage,
  args: ["gateway-pairing"],
  env: [
    { name: PairingVariables.gateway, value: `http://127.0.0.1:${GATEWAY_PORT}` },
    { name: PairingVariables.deviceId, value: device.id },
    { name: PairingVariables.scopes, value: device.scopes.join(",") },
    { name: PairingVariables.token, valueFrom: { secretKeyRef: { name: secretName, key: tokenVariable } } }
  ],
  resources: { requests: { cpu: "10m", memory: "32Mi" }, limits: { cpu: "100m", memory: "128Mi" } },
  securityContext: {
    runAsNonRoot: true,
    runAsUser: PAIRING_UID,
    runAsGroup: PAIRING_UID,
    allowPrivilegeEscalation: false,
    readOnlyRootFilesystem: true,
    capabilities: { drop: ["ALL"] },
    seccompProfile: { type: "RuntimeDefault" }
  }
})
