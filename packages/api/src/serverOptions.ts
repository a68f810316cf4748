import type { StartupConfig } from "@svc/core/config"
import { AuthSettings } from "./auth/settings.js"
import type { ServerOptions } from "./server.js"

/** The HTTP server settings of a process, from its configuration. */
export const serverOptions = ({ process, installation }: StartupConfig): ServerOptions => ({
  host: process.host,
  port: process.port,
  development: process.env === "development",
  maxBodyBytes: process.maxBodyBytes,
  installation,
  auth: AuthSettings.from({
    baseUrl: process.baseUrl,
    production: process.env === "production",
    trustedProxies: process.trustedProxies,
    passwordHashing: process.passwordHashing,
    nativeAdmin: installation.nativeAdmin
  })
})
