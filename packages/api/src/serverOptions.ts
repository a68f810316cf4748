import type { StartupConfig } from "@svc/core/config"
import type { ServerOptions } from "./server.js"

/** The HTTP server settings of a process, from its configuration. */
export const serverOptions = ({ process }: StartupConfig): ServerOptions => ({
  host: process.host,
  port: process.port,
  development: process.env === "development",
  maxBodyBytes: process.maxBodyBytes
})
