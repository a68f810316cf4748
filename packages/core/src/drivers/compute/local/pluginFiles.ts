/**
 * Puts a revision's plugins in the Agent's own directory (`<agent>/plugins/<pluginId>`) before
 * its gateway starts: copied from the Plugin Driver's host cache, replacing whatever an earlier
 * revision left, owned by the service and readable (never writable) by the gateway's user, which
 * is what OpenClaw accepts of a plugin directory (owned by it or root, not world-writable). Inside
 * the Agent's tree, so a sandboxed gateway sees them without another bind.
 */
import * as fs from "node:fs/promises"
import * as path from "node:path"
import type { GatewayPlugin } from "../driver.js"
import type { PluginRendering } from "./gatewayConfig.js"
import type { AgentLayout } from "./layout.js"

const PLUGIN_DIRECTORY = /^[a-z0-9][a-z0-9._-]{0,127}$/

/** Directories 0755, files 0644: readable by the gateway's user, writable by the service only. */
const shareTree = async (dir: string): Promise<void> => {
  await fs.chmod(dir, 0o755)
  for (const item of await fs.readdir(dir, { withFileTypes: true })) {
    const target = path.join(dir, item.name)
    if (item.isDirectory()) await shareTree(target)
    else if (item.isFile()) await fs.chmod(target, 0o644)
    else await fs.rm(target, { force: true })
  }
}

export const pluginsDirectory = (layout: AgentLayout): string => path.join(layout.root, "plugins")

export const placePlugins = async (layout: AgentLayout, plugins: ReadonlyArray<GatewayPlugin>): Promise<PluginRendering> => {
  const root = pluginsDirectory(layout)
  await fs.rm(root, { recursive: true, force: true })
  const rendering = { loadPaths: [] as Array<string>, entries: {} as Record<string, { hooks: Readonly<Record<string, boolean>> }>, deniedTools: [] as Array<string> }
  if (plugins.length === 0) return rendering
  await fs.mkdir(root, { mode: 0o755 })
  for (const plugin of plugins) {
    if (!PLUGIN_DIRECTORY.test(plugin.pluginId)) throw new Error(`plugin id ${plugin.pluginId} cannot name a directory`)
    const target = path.join(root, plugin.pluginId)
    await fs.cp(plugin.directory, target, { recursive: true, dereference: false, verbatimSymlinks: true })
    await shareTree(target)
    rendering.loadPaths.push(target)
    rendering.entries[plugin.pluginId] = { hooks: plugin.hooks }
    rendering.deniedTools.push(...plugin.deniedTools)
  }
  await fs.chmod(root, 0o755)
  return rendering
}
