/**
 * A loopback npm registry for plugin tests: it serves the tarballs vendored under
 * `testing/fixtures/plugins/` at their registry paths (`/<package>/-/<name>-<version>.tgz`), so
 * deployments install real, integrity-pinned plugin packages without the network. `mode`
 * switches what it answers: the real bytes, altered bytes (an integrity mismatch), or 503;
 * `modes` overrides it for one tarball (by file name), so one plugin can fail while another
 * installs.
 */
import * as fs from "node:fs/promises"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const FIXTURES = path.join(path.dirname(fileURLToPath(import.meta.url)), "fixtures", "plugins")

export type RegistryMode = "serve" | "corrupt" | "unavailable"

export interface PluginRegistry {
  readonly url: string
  mode: RegistryMode
  /** Per tarball file name (`synology-chat-2026.9.4.tgz`): overrides `mode` for that file. */
  readonly modes: Map<string, RegistryMode>
  /** The paths asked for, in order. */
  readonly requests: () => ReadonlyArray<string>
  readonly close: () => Promise<void>
}

export const startPluginRegistry = async (): Promise<PluginRegistry> => {
  const requests: Array<string> = []
  const registry = { mode: "serve" as RegistryMode, modes: new Map<string, RegistryMode>() }
  const server = http.createServer((req, res) => {
    const url = req.url ?? "/"
    requests.push(url)
    const file = /^\/(?:@[a-z0-9-]+\/)?[a-z0-9-]+\/-\/([a-z0-9.-]+\.tgz)$/.exec(url)?.[1]
    const mode = (file === undefined ? undefined : registry.modes.get(file)) ?? registry.mode
    if (mode === "unavailable") {
      res.writeHead(503).end()
      return
    }
    if (req.method !== "GET" || file === undefined) {
      res.writeHead(404).end()
      return
    }
    fs.readFile(path.join(FIXTURES, file)).then(
      (bytes) => {
        if (mode === "corrupt") bytes[bytes.length - 1] = bytes[bytes.length - 1]! ^ 0xff
        res.writeHead(200, { "content-type": "application/octet-stream", "content-length": bytes.length }).end(bytes)
      },
      () => res.writeHead(404).end()
    )
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  return Object.assign(registry, {
    url: `http://127.0.0.1:${port}`,
    requests: () => [...requests],
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  })
}
