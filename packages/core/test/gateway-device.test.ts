/**
 * The service's gateway device identity (`deviceIdentityFromSecret`) and the pairing container's
 * decision (`approvable`): one stable key per service secret, and approval only of that device id
 * asking for the operator role within the service's scopes.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Compute from "@svc/core/drivers/compute"
import { createHash, createPublicKey, sign, verify } from "node:crypto"

const secret = new Uint8Array(32).fill(1)
const config = { deviceId: Compute.deviceIdentityFromSecret(secret).id, scopes: Compute.SERVICE_DEVICE_SCOPES }

describe("the service's gateway device", () => {
  it("is the same key for the same secret (every API and worker process), another for another secret", () => {
    const first = Compute.deviceIdentityFromSecret(secret)
    const second = Compute.deviceIdentityFromSecret(Uint8Array.from(secret))
    expect(second.id).toBe(first.id)
    expect(second.publicKey).toBe(first.publicKey)
    expect(Compute.deviceIdentityFromSecret(new Uint8Array(32).fill(2)).id).not.toBe(first.id)
    // The id is the SHA-256 of the raw public key (what the gateway checks), and the key signs.
    expect(first.id).toBe(createHash("sha256").update(Buffer.from(first.publicKey, "base64url")).digest("hex"))
    const signature = sign(null, Buffer.from("challenge"), first.privateKey)
    expect(verify(null, Buffer.from("challenge"), createPublicKey(first.privateKey), signature)).toBe(true)
    // Neither public value carries the secret.
    expect(first.id).not.toContain(Buffer.from(secret).toString("hex"))
    expect(first.publicKey).not.toContain(Buffer.from(secret).toString("base64url"))
  })

  it("approvable: the service's id, the operator role, scopes within the service's", () => {
    expect(Compute.approvable({ requestId: "r1", deviceId: config.deviceId, role: "operator", scopes: ["operator.read"] }, config)).toBe(true)
    expect(Compute.approvable({ requestId: "r2", deviceId: config.deviceId, roles: ["operator"], scopes: ["operator.read", "operator.admin"] }, config)).toBe(true)
  })

  it("not approvable: another device, another role, no role, a scope beyond the service's", () => {
    const other = Compute.makeDeviceIdentity().id
    expect(Compute.approvable({ requestId: "r1", deviceId: other, role: "operator", scopes: ["operator.read"] }, config)).toBe(false)
    expect(Compute.approvable({ requestId: "r2", deviceId: config.deviceId, role: "node", scopes: [] }, config)).toBe(false)
    expect(Compute.approvable({ requestId: "r3", deviceId: config.deviceId, roles: ["operator", "node"], scopes: ["operator.read"] }, config)).toBe(false)
    expect(Compute.approvable({ requestId: "r4", deviceId: config.deviceId, scopes: ["operator.read"] }, config)).toBe(false)
    expect(Compute.approvable({ requestId: "r5", deviceId: config.deviceId, role: "operator", scopes: ["operator.read", "operator.pairing"] }, config)).toBe(false)
  })

  it("the pairing container: the service's image (harnessImage), its device, the token alone; none without a device", () => {
    const spec = { namespaceId: "ns_1", agentId: "agt_pair", revisionId: "rev_1", values: {}, env: {} } as unknown as Parameters<typeof Compute.agentManifests>[0]
    type Pod = { spec: { template: { spec: { containers: Array<{ name: string; image: string; env: ReadonlyArray<unknown>; envFrom?: unknown }> } } } }
    const containers = (workload: Parameters<typeof Compute.agentManifests>[3]) =>
      (Compute.agentManifests(spec, "svc-ns", "gateway-token", workload).deployment as unknown as Pod).spec.template.spec.containers
    const withDevice = containers({ harnessImage: "registry.example.com/svc:1.2.3", serviceDevice: { id: config.deviceId, scopes: ["operator.read"] } })
    expect(withDevice.map((container) => container.name)).toEqual(["gateway", Compute.PAIRING_CONTAINER])
    const pairing = withDevice[1]!
    expect(pairing.image).toBe("registry.example.com/svc:1.2.3")
    expect(pairing.envFrom).toBeUndefined()
    expect(pairing.env).toContainEqual({ name: Compute.PairingVariables.deviceId, value: config.deviceId })
    expect(pairing.env).toContainEqual({ name: Compute.PairingVariables.scopes, value: "operator.read" })
    expect(JSON.stringify(pairing)).not.toContain("gateway-token")
    expect(containers({}).map((container) => container.name)).toEqual(["gateway"])
  })
})
