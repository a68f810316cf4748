import { HttpServer } from "@effect/platform"
import { Effect, Layer } from "effect"
import { SvcApi } from "./api.js"
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
import { secretDriverFromConfiguration } from "@svc/core/drivers/secret"
import { httpPipeline } from "@svc/core/http"
import { defaultInstallationConfig, InstallationConfiguration } from "@svc/core/config"
import { listen, type ServerOptions } from "./server.js"

/**
 * Every HTTP group of the service, wired, with the authentication middleware they share.
 * Needs an SqlClient and the AuthSettings.
 */
export const ApiGroupsLive = Layer.mergeAll(HealthLive, ExternalSignInLive, AccountsLive, ServiceKeysLive, InstallationLive, NamespacesLive, IamLive, SecretsLive, ConfigurationsLive, PresetsLive, AgentsLive).pipe(
  Layer.provide(secretDriverFromConfiguration),
  Layer.provideMerge(AuthenticationLive)
)

/** Logs the address once the server listens (with port 0, the port it was given). */
const logListening = Layer.effectDiscard(
  HttpServer.addressFormattedWith((url) => Effect.logInfo(`svc api listening on ${url}`).pipe(Effect.annotateLogs({ url })))
)

/**
 * The API server of the service: needs an SqlClient and the ProcessConfiguration (SVC_BASE_URL
 * for external sign-in, `ExternalSignInSettings.fromConfiguration`).
 */
export const ApiServerLive = (options: ServerOptions) =>
  Layer.merge(httpPipeline(SvcApi, ApiGroupsLive, options), logListening).pipe(
    Layer.provide(listen(options)),
    Layer.provide(Layer.succeed(AuthSettings, options.auth)),
    Layer.provide(ExternalSignInSettings.fromConfiguration),
    Layer.provide(Layer.succeed(InstallationConfiguration, options.installation ?? defaultInstallationConfig))
  )
