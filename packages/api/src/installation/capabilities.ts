import type { InstallationConfig } from "@svc/core/config"
import { type Confinement, confinementCheck } from "@svc/core/drivers/compute"
import { bundledPolicies } from "@svc/core/drivers/plugin"
import type { Capabilities, InstallationCheck } from "@svc/core/api"

/**
 * The capabilities the selected Drivers give (SPEC 2.2); docs/decisions/iam.md explains each.
 * - Compute `local` runs each Agent's gateway as a child process on this host: `embedded`
 *   execution only. `kubernetes` can also give an Agent dedicated native workers.
 * - `pluginPolicies` only with a Plugin Driver: what the `bundled` Driver supports
 *   (`@svc/core/drivers/plugin` `bundledPolicies`, docs/decisions/plugins.md).
 */
export const capabilitiesOf = (config: InstallationConfig): Capabilities => {
  const dedicated = config.drivers.compute.id === "kubernetes"
  return {
    agentProvisioning: { executionModes: dedicated ? ["embedded", "dedicated"] : ["embedded"] },
    ...(dedicated ? { nativeWorkers: {} } : {}),
    ...(config.drivers.plugin === undefined
      ? {}
      : { pluginPolicies: bundledPolicies })
  }
}

/** The Backend inventory: id and type only, never configuration, paths or member Drivers. */
export const backendsOf = (config: InstallationConfig) =>
  config.backends.map((backend) => ({ id: backend.id, type: backend.type }))

/**
 * The Installation's host diagnostics: how the `local` driver confines Agent gateways on this
 * host (`undefined` for other Compute Drivers, whose gateways do not run here).
 */
export const diagnosticsOf = (
  config: InstallationConfig,
  confinement: Confinement | undefined
): ReadonlyArray<typeof InstallationCheck.Type> | undefined =>
  config.drivers.compute.id === "local" && confinement !== undefined ? [confinementCheck(confinement)] : undefined
