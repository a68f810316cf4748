import { Effect, Layer } from "effect"
import { InstallationConfiguration, type ProcessConfiguration } from "../../config/index.js"
import type { ComputeDriver } from "./driver.js"
import { layerKubernetes } from "./kubernetes.js"
import { layerLocalFromProcess } from "./local.js"
import { metered } from "./metered.js"

/**
 * The Compute Driver the Installation configuration selects (`drivers.compute`): `local`, or
 * `kubernetes` over the configured kubeconfig or in-cluster credentials.
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
          return metered(layerKubernetes(settings))
        }
      }
    })
  )

/**
 * Whether the selected Compute Driver binds an operator-prepared `existingNamespace` (SPEC 4.2):
 * only `kubernetes` has runtime namespaces an operator can prepare; `local` does not.
 */
export const supportsExistingNamespace = (selection: { readonly id: string }): boolean => selection.id === "kubernetes"
