import { Effect, Layer } from "effect"
import { InstallationConfiguration, type ProcessConfiguration } from "../../config/index.js"
import type { ComputeDriver } from "./driver.js"
import { layerLocalFromProcess } from "./local.js"
import { metered } from "./metered.js"

/**
 * The Compute Driver the Installation configuration selects (`drivers.compute`). Only `local`
 * exists; selecting `kubernetes` stops the process at start with a defect that says so.
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
        case "kubernetes":
          return yield* Effect.dieMessage("the kubernetes Compute Driver is not implemented yet; select compute: local")
      }
    })
  )

/**
 * Whether the selected Compute Driver binds an operator-prepared `existingNamespace` (SPEC 4.2):
 * only `kubernetes` has runtime namespaces an operator can prepare; `local` does not.
 */
export const supportsExistingNamespace = (selection: { readonly id: string }): boolean => selection.id === "kubernetes"
