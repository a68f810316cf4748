import { HttpServer } from "@effect/platform"
import { Effect, Layer } from "effect"
import { SvcApi } from "@svc/core/api"
import { authenticationLayer, AuthSettings } from "./auth/index.js"
import { HealthLive } from "./health/http.js"
import { Health } from "./health/service.js"
import { BrowserOriginLive, ExternalSignInLive, ExternalSignInSettings } from "./externalSignIn/index.js"
import { ExternalSignIn } from "./externalSignIn/service.js"
import { AccountReadOriginLive, AccountsLive, HumanSessionLive, SessionInspectionLive, SignInOriginLive } from "./accounts/index.js"
import { Accounts } from "./accounts/accounts.js"
import { AccountStates } from "./accounts/accountState.js"
import { Recovery } from "./accounts/recovery.js"
import { Sessions } from "./accounts/sessions.js"
import { SignIn } from "./accounts/signIn.js"
import { ServiceKeysLive } from "./serviceKeys/http.js"
import { ServiceKeys } from "./serviceKeys/service.js"
import { IamAccessBindings } from "./iam/bindings.js"
import { IamLive } from "./iam/http.js"
import { IamRoles } from "./iam/roles.js"
import { IamServicePrincipals } from "./iam/servicePrincipals.js"
import { backendsRead, installationRead, InstallationLive, InstallationService } from "./installation/index.js"
import { Namespaces, NamespacesLive } from "./namespaces/index.js"
import { Secrets, SecretsLive } from "./secrets/index.js"
import { Configurations, ConfigurationsLive } from "./configurations/index.js"
import {
  AgentPluginsLive,
  Agents,
  AgentsLive,
  DeploymentEvents,
  Deployments,
  Diagnostics,
  PluginCatalog,
  Provisioning,
  RepositoryOptions,
  Rollback,
  Workspace
} from "./agents/index.js"
import { Presets, PresetsLive } from "./presets/index.js"
import { Permissions, PermissionsLive } from "./permissions/index.js"
import { WorkOutboxLive } from "@svc/core/work"
import { httpPipeline, type PipelineOptions } from "@svc/core/http"
import { defaultInstallationConfig, InstallationConfiguration, type NativeAdminConfig } from "@svc/core/config"
import { nativeAdminDispatch } from "./nativeAdmin/index.js"
import { consoleDispatch } from "./console/index.js"
import { listen, type ServerOptions } from "./server.js"
import { IdempotencyMiddlewaresLive } from "./idempotency/index.js"
import { AuditApiLive, AuditQueries } from "./audit/index.js"
import { ServiceAccountLifecycle, ServiceAccounts, ServiceAccountsLive } from "./serviceAccounts/index.js"
import { CredentialSources, CredentialSourcesLive } from "./credentialSources/index.js"
import { CredentialGateway } from "@svc/core/drivers/credentialGateway"

/**
 * The feature services the handler groups call, each taking its repositories once. Namespaces
 * queue their reconciliation in the durable outbox; the Agents services read or write live
 * through the Compute Driver main.ts selects.
 */
const FeatureServicesLive = Layer.mergeAll(
  Health.Default,
  Namespaces.Default.pipe(Layer.provide(WorkOutboxLive)),
  Secrets.Default,
  Configurations.Default,
  Presets.Default,
  IamRoles.Default,
  IamServicePrincipals.Default,
  IamAccessBindings.Default,
  InstallationService.Default,
  Agents.Default,
  Deployments.Default,
  Rollback.Default,
  DeploymentEvents.Default,
  Provisioning.Default,
  Workspace.Default,
  Diagnostics.Default,
  PluginCatalog.Default,
  RepositoryOptions.Default,
  ServiceKeys.Default,
  Accounts.Default,
  AccountStates.Default,
  Recovery.Default,
  SignIn.Default,
  Sessions.Default,
  ExternalSignIn.Default,
  AuditQueries.Default,
  Permissions.Default,
  ServiceAccounts.Default,
  ServiceAccountLifecycle.Default,
  CredentialSources.Default.pipe(Layer.provide(CredentialGateway.fromInstallation))
)

/**
 * Every HTTP group of the service, wired, with the middlewares they use (authentication, the
 * sign-in and account-read Origin checks, session inspection, the provider flows' Origin).
 * Needs an SqlClient, the AuthSettings, the BodyLimit (the pipeline gives it), and the SecretDriver
 * and ComputeDriver main.ts selects.
 */
export const ApiGroupsLive = Layer.mergeAll(HealthLive, ExternalSignInLive, AccountsLive, ServiceKeysLive, InstallationLive, NamespacesLive, IamLive, SecretsLive, ConfigurationsLive, PresetsLive, AgentsLive, AgentPluginsLive, AuditApiLive, PermissionsLive, ServiceAccountsLive, CredentialSourcesLive).pipe(
  Layer.provide(FeatureServicesLive),
  Layer.provide(Layer.mergeAll(SignInOriginLive, AccountReadOriginLive, HumanSessionLive, SessionInspectionLive, BrowserOriginLive, IdempotencyMiddlewaresLive)),
  // Endpoints whose authorization (and row) ride in the credential statement (issue 11).
  Layer.provideMerge(authenticationLayer([installationRead, backendsRead]))
)

/**
 * The API's pipeline with native admin on: requests for Agent hosts are dispatched to their
 * gateways before routing (SPEC 5.8), which the ComputeDriver locates; the console is served
 * on the service's own host.
 */
export const nativeAdminPipeline = (options: PipelineOptions, config: NativeAdminConfig, consoleDir?: string) =>
  Layer.unwrapEffect(
    Effect.all([nativeAdminDispatch(config), consoleDispatch(consoleDir, { nativeAdmin: { agentHostSuffix: config.agentHostSuffix } })]).pipe(
      Effect.map(([nativeAdmin, console]) => httpPipeline(SvcApi, ApiGroupsLive, options, (app) => nativeAdmin(console(app))))
    )
  )

/**
 * The API's pipeline for an Installation: the console at /console/, and with native admin on,
 * dispatching to gateways first.
 */
const apiPipeline = (options: ServerOptions) => {
  const nativeAdmin = options.installation?.nativeAdmin
  return nativeAdmin?.enabled === true
    ? nativeAdminPipeline(options, nativeAdmin)
    : Layer.unwrapEffect(Effect.map(consoleDispatch(), (console) => httpPipeline(SvcApi, ApiGroupsLive, options, console)))
}

/** Logs the address the server listens on (with port 0, the port it was given). */
const logListening = Layer.effectDiscard(
  HttpServer.addressFormattedWith((url) => Effect.logInfo(`svc api listening on ${url}`).pipe(Effect.annotateLogs({ url })))
)

/**
 * The API server of the service: needs an SqlClient, the ProcessConfiguration (SVC_BASE_URL
 * for external sign-in, `ExternalSignInSettings.fromConfiguration`), and the Secret and Compute
 * Drivers its main.ts selects. "listening" is logged once the app serves requests, not when the
 * socket opens: the handler groups and their services are built in between.
 */
export const ApiServerLive = (options: ServerOptions) =>
  logListening.pipe(
    Layer.provide(apiPipeline(options).pipe(Layer.provideMerge(listen(options)))),
    Layer.provide(Layer.succeed(AuthSettings, options.auth)),
    Layer.provide(ExternalSignInSettings.fromConfiguration),
    Layer.provide(Layer.succeed(InstallationConfiguration, options.installation ?? defaultInstallationConfig))
  )
