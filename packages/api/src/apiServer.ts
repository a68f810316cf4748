import { HttpServer } from "@effect/platform"
import { Effect, Layer } from "effect"
import { SvcApi } from "@svc/core/api"
import { AuthenticationLive, AuthSettings } from "./auth/index.js"
import { HealthLive } from "./health/http.js"
import { ExternalSignInLive, ExternalSignInSettings } from "./externalSignIn/index.js"
import { AccountsLive } from "./accounts/index.js"
import { ServiceKeysLive } from "./serviceKeys/http.js"
import { IamLive } from "./iam/http.js"
import { InstallationLive } from "./installation/http.js"
import { NamespacesLive } from "./namespaces/http.js"
import { SecretsLive } from "./secrets/http.js"
import { ConfigurationsLive } from "./configurations/http.js"
import { AgentsLive } from "./agents/http.js"
import { PresetsLive } from "./presets/http.js"
import { httpPipeline, type PipelineOptions } from "@svc/core/http"
import { defaultInstallationConfig, InstallationConfiguration, type NativeAdminConfig } from "@svc/core/config"
import { nativeAdminDispatch } from "./nativeAdmin/index.js"
import { listen, type ServerOptions } from "./server.js"

/**
 * Every HTTP group of the service, wired, with the authentication middleware they share.
 * Needs an SqlClient, the AuthSettings, and the SecretDriver and ComputeDriver main.ts selects.
 */
export const ApiGroupsLive = Layer.mergeAll(HealthLive, ExternalSignInLive, AccountsLive, ServiceKeysLive, InstallationLive, NamespacesLive, IamLive, SecretsLive, ConfigurationsLive, PresetsLive, AgentsLive).pipe(
  Layer.provideMerge(AuthenticationLive)
)

/**
 * The API's pipeline with native admin on: requests for Agent hosts are dispatched to their
 * gateways before routing (SPEC 5.8), which the ComputeDriver locates.
 */
export const nativeAdminPipeline = (options: PipelineOptions, config: NativeAdminConfig) =>
  Layer.unwrapEffect(
    Effect.map(nativeAdminDispatch(config), (dispatch) => httpPipeline(SvcApi, ApiGroupsLive, options, dispatch))
  )

/**
 * The API's pipeline for an Installation: with native admin on, dispatching to gateways;
 * off, the plain API.
 */
const apiPipeline = (options: ServerOptions) => {
  const nativeAdmin = options.installation?.nativeAdmin
  return nativeAdmin?.enabled === true
    ? nativeAdminPipeline(options, nativeAdmin)
    : httpPipeline(SvcApi, ApiGroupsLive, options)
}

/** Logs the address once the server listens (with port 0, the port it was given). */
const logListening = Layer.effectDiscard(
  HttpServer.addressFormattedWith((url) => Effect.logInfo(`svc api listening on ${url}`).pipe(Effect.annotateLogs({ url })))
)

/**
 * The API server of the service: needs an SqlClient, the ProcessConfiguration (SVC_BASE_URL
 * for external sign-in, `ExternalSignInSettings.fromConfiguration`), and the Secret and Compute
 * Drivers its main.ts selects.
 */
export const ApiServerLive = (options: ServerOptions) =>
  Layer.merge(apiPipeline(options), logListening).pipe(
    Layer.provide(listen(options)),
    Layer.provide(Layer.succeed(AuthSettings, options.auth)),
    Layer.provide(ExternalSignInSettings.fromConfiguration),
    Layer.provide(Layer.succeed(InstallationConfiguration, options.installation ?? defaultInstallationConfig))
  )
