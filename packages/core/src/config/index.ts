/**
 * Configuration of every process: the operator variables (Effect `Config`), development secrets
 * generated under the data dir, the Installation configuration file, and `loadOrExit` for main.ts.
 */
export {
  BootstrapConfig,
  type BootstrapOutputs,
  type BootstrapSettings,
  defaults,
  type Environment,
  ProcessConfig,
  type ProcessSettings,
  TelemetryConfig,
  type TelemetrySettings
} from "./process.js"
export { DevSecretError, devSecretFiles, type ProcessSecrets, resolveDevSecrets } from "./devSecrets.js"
export { configErrorLines, formatStartupError } from "./format.js"
export {
  EX_CONFIG,
  InstallationConfiguration,
  type LoadedProcessConfig,
  loadOrExit,
  loadProcessConfig,
  loadStartupConfig,
  ProcessConfiguration,
  secretValues,
  type StartupConfig,
  startupConfigLayer
} from "./load.js"
export {
  defaultInstallationConfig,
  InstallationConfig,
  type InstallationConfigEncoded,
  OAuthProvider,
  Providers
} from "./installation/schema.js"
export {
  Backend,
  BackendType,
  CodeHostBackend,
  ModelAccountsBackend,
  SandboxAuth,
  SandboxGatewayBackend,
  SandboxGatewayConfiguration,
  sandboxGatewayTarget,
  sandboxUsesTls
} from "./installation/backends.js"
export {
  ComputeDriver,
  defaultDrivers,
  Drivers,
  IamDriver,
  KubernetesCompute,
  LocalCompute,
  NamedDriver,
  PluginDriver,
  RepoDriver,
  SecretDriver
} from "./installation/drivers.js"
export {
  agentHostLabel,
  isAtOrBelow,
  isPublicSuffix,
  NativeAdminConfig,
  nativeAdminConsoleProblems
} from "./installation/nativeAdmin.js"
export {
  decodeInstallationConfig,
  formatJsonPath,
  InstallationConfigError,
  type InstallationConfigProblem,
  loadInstallationConfig
} from "./installation/load.js"
export { type DevUpstreams, DevUpstreamsConfig, parseDevUpstreams, upstreamOrigin } from "./devUpstreams.js"
export {
  approvedRepository,
  CanonicalRepository,
  DecimalId,
  NamespacePolicy,
  PushRefPattern,
  RegistryRepository,
  RepositoryProfileName,
  RepositoryRegistry,
  type RepositoryRegistryEncoded
} from "./installation/registry.js"
export { decodeRepositoryRegistry, loadRepositoryRegistry, RepositoryRegistryError } from "./installation/registryLoad.js"
