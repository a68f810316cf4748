/**
 * An Installation whose only Backend is a `sandbox_gateway` (drivers `gw`) with the given
 * configuration, decoded as the loader does (a refusal throws), for the Credential Gateway tests.
 */
import { decodeInstallationConfig, type InstallationConfig, type SandboxGatewayConfiguration } from "@svc/core/config"
import { Either } from "effect"

export const sandboxInstallation = (configuration: Record<string, unknown>): InstallationConfig => {
  const decoded = decodeInstallationConfig("/test", {
    drivers: { sandbox: { id: "gw" }, credentialGateway: { id: "gw" } },
    backends: [{ id: "sandbox", type: "sandbox_gateway", configuration, drivers: { sandbox: "gw", credentialGateway: "gw" } }]
  })
  if (Either.isLeft(decoded)) throw decoded.left
  return decoded.right
}

/** That Installation's Backend configuration. */
export const sandboxConfiguration = (configuration: Record<string, unknown>): SandboxGatewayConfiguration => {
  const backend = sandboxInstallation(configuration).backends[0]
  if (backend?.type !== "sandbox_gateway") throw new Error("no sandbox_gateway Backend")
  return backend.configuration
}
