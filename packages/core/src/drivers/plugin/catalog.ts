/**
 * The `bundled` Plugin Driver's curated catalog (DESIGN §15): OpenClaw plugins published on the
 * npm registry, each pinned to one version and its registry integrity (`sha512-...`, what
 * `npm view <package>@<version> dist.integrity` prints). Pinning both means a catalog entry
 * always installs the same bytes: a registry or mirror that serves anything else is refused.
 *
 * IDs are `bundled:<plugin id>`, where `<plugin id>` is the plugin's own id (its
 * `openclaw.plugin.json`), the key the gateway's `plugins.entries` uses. Pure data; no Node-only
 * imports, so the API and the console can read it.
 */

/** A tool a plugin registers, by the name the gateway knows it under (SPEC 2.9 tool IDs). */
export interface CatalogTool {
  readonly id: string
  readonly name: string
  readonly description: string
}

/**
 * What a plugin needs to authenticate. It is satisfied when the deployed Configuration delivers
 * one of `env` as a Secret binding, or sets one of `configPaths` in its values. Without it the
 * plugin is not enabled and the deployment warns `PLUGIN_AUTH_REQUIRED` (SPEC 2.7).
 */
export interface CatalogAuth {
  readonly env: ReadonlyArray<string>
  readonly configPaths: ReadonlyArray<ReadonlyArray<string>>
  readonly help: { readonly label: string; readonly url: string }
}

export interface CatalogEntry {
  /** `bundled:<pluginId>`. */
  readonly id: string
  /** The plugin's own id: its directory name and its `plugins.entries` key in the gateway. */
  readonly pluginId: string
  readonly name: string
  readonly description: string
  readonly package: string
  readonly version: string
  readonly integrity: string
  /** The tools the plugin registers; null for a plugin that registers none (a channel). */
  readonly tools: ReadonlyArray<CatalogTool> | null
  readonly auth?: CatalogAuth
  readonly websiteUrl: string
}

/** The catalog's version: a revision freezes it as its Plugin Driver's implementation. */
export const CATALOG_VERSION = "2026-11-23"

export const BUNDLED_PREFIX = "bundled:"

export const catalog: ReadonlyArray<CatalogEntry> = [
  {
    id: "bundled:openclaw-web-search",
    pluginId: "openclaw-web-search",
    name: "Ollama Web Search",
    description: "Web search and page fetch through a local Ollama server's web search API.",
    package: "@ollama/openclaw-web-search",
    version: "0.2.2",
    integrity: "sha512-h0D3z36BH0ZDN2a9toAwO/1F2dLLpE0zkC3DgRHhA4kfO9d9eomXhmdmPKWtS612DasOX2Gla8hWWxScnfK1Ug==",
    tools: [
      { id: "ollama_web_search", name: "Ollama Web Search", description: "Search the web for current information." },
      { id: "ollama_web_fetch", name: "Ollama Web Fetch", description: "Fetch the content of a web page by URL." }
    ],
    websiteUrl: "https://www.npmjs.com/package/@ollama/openclaw-web-search"
  },
  {
    id: "bundled:zalo",
    pluginId: "zalo",
    name: "Zalo",
    description: "Zalo channel: the Agent chats through a Zalo bot.",
    package: "@openclaw/zalo",
    version: "2026.9.5",
    integrity: "sha512-j62Dh4rdSsn6zLvs32g12AoxZLEf3xD72eyplwowlA0BygNB/cpOEIMYcLgo2rxbOrnD1i+Pyrc5pWiEkh9nrg==",
    tools: null,
    auth: {
      env: ["ZALO_BOT_TOKEN"],
      configPaths: [["channels", "zalo", "botToken"], ["channels", "zalo", "tokenFile"]],
      help: { label: "Zalo channel setup", url: "https://docs.openclaw.ai/channels/zalo" }
    },
    websiteUrl: "https://www.npmjs.com/package/@openclaw/zalo"
  },
  {
    id: "bundled:synology-chat",
    pluginId: "synology-chat",
    name: "Synology Chat",
    description: "Synology Chat channel: the Agent chats through a Synology Chat webhook bot.",
    package: "@openclaw/synology-chat",
    version: "2026.9.4",
    integrity: "sha512-WOiSGal0VVTDxaOkNGZZN6HyKS9szdxLkWoQv2TmkWZ0YOUV8oYve22jFXcm19rzx9x1dqmAMX+/ebruN1Kcrw==",
    tools: null,
    auth: {
      env: ["SYNOLOGY_CHAT_TOKEN"],
      configPaths: [["channels", "synology-chat", "token"]],
      help: { label: "Synology Chat channel setup", url: "https://docs.openclaw.ai/channels/synology-chat" }
    },
    websiteUrl: "https://www.npmjs.com/package/@openclaw/synology-chat"
  }
]

export const catalogEntry = (id: string): CatalogEntry | undefined => catalog.find((entry) => entry.id === id)

/** The registry's tarball path of an entry: `/<package>/-/<unscoped name>-<version>.tgz`. */
export const tarballPath = (entry: CatalogEntry): string => {
  const unscoped = entry.package.includes("/") ? entry.package.slice(entry.package.indexOf("/") + 1) : entry.package
  return `/${entry.package}/-/${unscoped}-${entry.version}.tgz`
}

export const DEFAULT_REGISTRY = "https://registry.npmjs.org"
