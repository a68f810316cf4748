/**
 * The catalog as `POST .../agents/plugins` and `/plugins/details` show it (SPEC 4.4): one
 * plugin object per entry, searched by `q` (case-insensitive, over ID, name and description) and
 * paged by an opaque cursor (the last ID shown). Pure.
 */
import { catalog, type CatalogEntry } from "./catalog.js"

export interface PluginView {
  readonly id: string
  readonly name: string
  readonly tools: ReadonlyArray<{ readonly id: string; readonly name: string; readonly description: string }> | null
  readonly available: boolean
  readonly description: string
  readonly remoteId: string
  readonly selectableWithoutTools: boolean
  readonly websiteUrl: string
  readonly unavailableHelp?: { readonly label: string; readonly url: string }
}

export const pluginView = (entry: CatalogEntry): PluginView => ({
  id: entry.id,
  name: entry.name,
  tools: entry.tools,
  available: true,
  description: entry.description,
  remoteId: `${entry.package}@${entry.version}`,
  selectableWithoutTools: entry.tools === null,
  websiteUrl: entry.websiteUrl,
  // Shown beside a plugin that stays disabled until its credential is configured.
  ...(entry.auth === undefined ? {} : { unavailableHelp: entry.auth.help })
})

export const PAGE_SIZE = 50

export const listCatalog = (query: { readonly q?: string | undefined; readonly cursor?: string | undefined }) => {
  const needle = query.q?.toLowerCase()
  const matching = [...catalog]
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    .filter((entry) => needle === undefined || [entry.id, entry.name, entry.description].some((text) => text.toLowerCase().includes(needle)))
    .filter((entry) => query.cursor === undefined || entry.id > query.cursor)
  const page = matching.slice(0, PAGE_SIZE)
  return {
    plugins: page.map(pluginView),
    nextCursor: matching.length > PAGE_SIZE ? page[page.length - 1]!.id : null
  }
}
