import { NodeHttpServer } from "@effect/platform-node"
import type { PipelineOptions } from "@svc/core/http"
import { createServer } from "node:http"

export interface ServerOptions extends PipelineOptions {
  readonly host: string
  readonly port: number
}

/** Listens on host:port (TCP). */
export const listen = (options: Pick<ServerOptions, "host" | "port">) =>
  NodeHttpServer.layer(createServer, { host: options.host, port: options.port })
