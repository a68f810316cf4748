/**
 * `svc harness`: the model credential proxy of dedicated execution (`proxy.ts`), configured only
 * by its container's environment. It exits 78 when that environment cannot configure it.
 */
import { harnessConfigFrom, listenHarness } from "./proxy.js"

const config = harnessConfigFrom(process.env)
if (typeof config === "string") {
  console.error(JSON.stringify({ level: "error", message: `harness: ${config}` }))
  process.exit(78)
}
const server = await listenHarness(config)
console.log(JSON.stringify({ level: "info", message: "harness: listening", host: config.host, port: config.port, providers: Object.keys(config.upstreams) }))
const stop = () => server.close(() => process.exit(0))
process.once("SIGTERM", stop)
process.once("SIGINT", stop)
