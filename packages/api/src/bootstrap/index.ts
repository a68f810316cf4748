export {
  BOOTSTRAP_KEY_NAME,
  BootstrapError,
  BootstrapReposLive,
  type BootstrapInput,
  type BootstrapOutcome,
  DEFAULT_NAMESPACE,
  runBootstrap
} from "./initializer.js"
export { checkOutputTarget, OutputFileError, writeOutputFile } from "./outputFiles.js"
export { bootstrapInput } from "./settings.js"
