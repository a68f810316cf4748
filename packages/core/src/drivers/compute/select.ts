import { Effect, Layer, Option, Redacted } from "effect"
import { InstallationConfiguration, ProcessConfiguration } from "../../config/index.js"
import { deviceIdentityFromSecret } from "./gatewayRpc.js"
import type { ComputeDriver } from "./driver.js"
import { layerLocalFromProcess } from "./local.js"
import { metered } from "./metered.js"

/**
 * The Compute Driver the Installation configuration selects (`drivers.compute`): `local`, or
 * `kubernetes` over the configured kubeconfig or in-cluster credentials, its gateway device key
 * derived from `SVC_SECRET_KEY` (docs/decisions/kubernetes.md "Device pairing").
 * Gateway starts are counted for the metrics endpoints (`metered.ts`).
 */
export const layerFromConfiguration: Layer.Layer<ComputeDriver, never, InstallationConfiguration | ProcessConfiguration> =
  Layer.unwrapEffect(
    Effect.gen(function* () {
      const installation = yield* InstallationConfiguration
      const selected = installation.drivers.compute
      switch (selected.id) {
        case "local":
          return metered(layerLocalFromProcess)
        case "kubernetes": {
          const { id: _id, ...settings } = selected
          // Every API and worker process holds SVC_SECRET_KEY: one device for the gateways.
          const device = Option.getOrUndefined(Option.map((yield* ProcessConfiguration).secretKey, (key) => deviceIdentityFromSecret(Redacted.value(key))))
          // Loaded only when selected: the Kubernetes client is about a second of start-up.
          const { layerKubernetes } = yield* Effect.promise(() => import("./kubernetes.js"))
          return metered(layerKubernetes(settings, { device }))
        }
      }
    })
  )

/**
 * Whether the selected Compute Driver binds an operator-prepared `existingNamespace` (SPEC 4.2):
 * only `kubernetes` has runtime namespaces an operator can prepare; `local` does not.
 */
export const supportsExistingNamespace = (selection: { readonly id: string }): boolean => selection.id === "kubernetes"
