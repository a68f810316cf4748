import { NodeHttpServer } from "@effect/platform-node"
import type { InstallationConfig } from "@svc/core/config"
import { createEnvelopedServer, type PipelineOptions } from "@svc/core/http"
import type { AuthSettingsShape } from "./auth/settings.js"

export interface ServerOptions extends PipelineOptions {
  readonly host: string
  readonly port: number
  readonly auth: AuthSettingsShape
  /** The Installation configuration (Drivers, Backends); absent: the default Installation (DESIGN §3). */
  readonly installation?: InstallationConfig
}

/** Listens on host:port (TCP); requests node cannot parse are answered in the envelope too. */
export const listen = (options: Pick<ServerOptions, "host" | "port">) =>
  NodeHttpServer.layer(createEnvelopedServer, { host: options.host, port: options.port })
