import { NodeHttpServer } from "@effect/platform-node"
import type { InstallationConfig } from "@svc/core/config"
import type { PipelineOptions } from "@svc/core/http"
import { createServer } from "node:http"
import type { AuthSettingsShape } from "./auth/settings.js"

export interface ServerOptions extends PipelineOptions {
  readonly host: string
  readonly port: number
  readonly auth: AuthSettingsShape
  /** The Installation configuration (Drivers, Backends); absent: the default Installation (DESIGN §3). */
  readonly installation?: InstallationConfig
}

/** Listens on host:port (TCP). */
export const listen = (options: Pick<ServerOptions, "host" | "port">) =>
  NodeHttpServer.layer(createServer, { host: options.host, port: options.port })
