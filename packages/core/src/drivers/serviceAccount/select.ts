import { Layer, Option } from "effect"
import type { InstallationConfig } from "../../config/installation/schema.js"
import { type DevUpstreams, upstreamOrigin } from "../../config/devUpstreams.js"
import { ServiceAccountDriver } from "./driver.js"
import { makeModelVendorDriver, MODEL_VENDOR_ADMIN_ORIGIN } from "./modelVendor.js"

/** The vendor's Admin API deadline per request (the anchor's 30 s). */
export const ADMIN_API_TIMEOUT_MS = 30_000

/**
 * The ServiceAccount Driver the Installation selects: the model vendor's Admin API client of
 * the `model_accounts` Backend naming it (the configuration guarantees that Backend exists), or
 * none. Each main.ts selects it (DESIGN §10).
 */
export const selectServiceAccountDriver = (
  installation: Pick<InstallationConfig, "drivers" | "backends">,
  upstreams: DevUpstreams,
  timeoutMs: number = ADMIN_API_TIMEOUT_MS
): Layer.Layer<ServiceAccountDriver> => {
  const selected = installation.drivers.serviceAccount
  const backend = installation.backends.find((b) => b.type === "model_accounts")
  if (selected === undefined || backend === undefined || backend.type !== "model_accounts") {
    return Layer.succeed(ServiceAccountDriver, Option.none())
  }
  return Layer.succeed(ServiceAccountDriver, Option.some(makeModelVendorDriver({
    driverId: selected.id,
    backendId: backend.id,
    workspaceId: backend.configuration.workspaceId,
    credentialTtlSeconds: backend.configuration.credentialTtlSeconds,
    apiKeyPath: backend.configuration.apiKeyPath,
    origin: upstreamOrigin(upstreams, MODEL_VENDOR_ADMIN_ORIGIN),
    timeoutMs
  })))
}
