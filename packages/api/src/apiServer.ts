import { HttpServer } from "@effect/platform"
import { Effect, Layer } from "effect"
import { SvcApi } from "./api.js"
import { HealthLive } from "./health/http.js"
import { httpPipeline } from "@svc/core/http"
import { listen, type ServerOptions } from "./server.js"

/** Every HTTP group of the service, wired. */
export const ApiGroupsLive = Layer.mergeAll(HealthLive)

/** Logs the address once the server listens (with port 0, the port it was given). */
const logListening = Layer.effectDiscard(
  HttpServer.addressFormattedWith((url) => Effect.logInfo(`svc api listening on ${url}`).pipe(Effect.annotateLogs({ url })))
)

/** The API server of the service: needs an SqlClient. */
export const ApiServerLive = (options: ServerOptions) =>
  Layer.merge(httpPipeline(SvcApi, ApiGroupsLive, options), logListening).pipe(Layer.provide(listen(options)))
