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
export {
  defaultRuntimeRoot,
  locateRuntime,
  RUNTIME_NOT_INSTALLED,
  runtimePaths,
  RuntimeVersions,
  versionKey
} from "./local/runtime.js"
export { type InstallOutcome, installRuntime, RuntimeInstallError } from "./local/runtimeInstall.js"
