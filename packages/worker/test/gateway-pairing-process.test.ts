/**
 * `svc gateway-pairing`, the process of the `pairing` container (the built entry; run
 * `npx tsc -b` first): an environment it cannot run with is exit 78 naming the variables and
 * never a value; with nothing listening it keeps reconnecting (a gateway that restarts) and stops
 * cleanly on SIGTERM, the gateway token never in its output. Approval against the real gateway:
 * packages/core/test/kubernetes-pairing.test.ts.
 */
import { describe, expect, it } from "vitest"
import { PairingVariables } from "@svc/core/drivers/compute"
import { freePort, svc } from "../../../testing/process.js"

const TOKEN = "pairing-gateway-token-0123456789"
const DEVICE = "a".repeat(64)

describe("svc gateway-pairing, the process", () => {
  it("exits 78 naming what is missing or wrong, without the values it was given", async () => {
    const missing = svc("gateway-pairing", { [PairingVariables.deviceId]: DEVICE })
    expect(await missing.exited).toEqual({ code: 78, signal: null })
    expect(missing.output()).toBe("OPENCLAW_GATEWAY_TOKEN: required but not set\n")
    const wrong = svc("gateway-pairing", { [PairingVariables.token]: TOKEN, [PairingVariables.deviceId]: "not-a-device" })
    expect(await wrong.exited).toEqual({ code: 78, signal: null })
    expect(wrong.output()).toBe("SVC_PAIRING_DEVICE_ID: a device id is 64 hex digits\n")
    expect(wrong.output()).not.toContain(TOKEN)
  })

  it("reconnects while the gateway is away, and stops on SIGTERM; the token never in its output", async () => {
    const port = await freePort()
    const child = svc("gateway-pairing", {
      [PairingVariables.gateway]: `http://127.0.0.1:${port}`,
      [PairingVariables.token]: TOKEN,
      [PairingVariables.deviceId]: DEVICE
    })
    try {
      const started = await child.waitFor(/message="pairing: approving the service's device".*\n/)
      expect(started).toContain(` deviceId=${DEVICE}`)
      expect(started).toContain(" scopes=operator.read,operator.admin")
      // Two failed attempts: it retries rather than exiting.
      await child.waitFor(/pairing: gateway session ended; reconnecting[\s\S]*pairing: gateway session ended; reconnecting/)
      expect(child.output()).toContain(`ECONNREFUSED 127.0.0.1:${port}`)
      expect(child.output()).not.toContain(TOKEN)
    } finally {
      expect(await child.stop()).toEqual({ code: 0, signal: null })
    }
  })
})
