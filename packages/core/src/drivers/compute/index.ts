/** The Compute Driver (DESIGN §8): the interface and its implementations. */
export * from "./driver.js"
export { layerFromConfiguration, supportsExistingNamespace } from "./select.js"
export {
  layerLocal,
  layerLocalFromProcess,
  LocalComputeCodes,
  makeLocalCompute,
  namespaceDirectory,
  namespacesRoot
} from "./local.js"
