import { HttpServer } from "@effect/platform"
import { Layer } from "effect"
import { SvcApi } from "./api.js"
import { HealthLive } from "./health/http.js"
import { httpPipeline, listen, type ServerOptions } from "./server.js"

/** Every HTTP group of the service, wired. */
export const ApiGroupsLive = Layer.mergeAll(HealthLive)

/** The API server of the service: needs an SqlClient. */
export const ApiServerLive = (options: ServerOptions) =>
  httpPipeline(SvcApi, ApiGroupsLive, options).pipe(HttpServer.withLogAddress, Layer.provide(listen(options)))
