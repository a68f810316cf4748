/**
 * The built console (packages/console/dist), read once when the server starts: a map from
 * path under /console/ to bytes and type. Requests are answered from this map only, so no
 * request path ever reaches the file system (no traversal, no stat per request). Not built:
 * `undefined`, and /console/ answers 503.
 */
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

export interface ConsoleAsset {
  readonly body: Uint8Array
  readonly contentType: string
}

export interface ConsoleAssets {
  readonly index: ConsoleAsset
  /** Keyed by the path below /console/, e.g. `assets/index-B2Gbhy2N.js`. */
  readonly files: ReadonlyMap<string, ConsoleAsset>
}

/** Where `npm run build` puts the console, from this file in packages/api/{src,dist}/console. */
export const defaultConsoleDir = (): string =>
  fileURLToPath(new URL("../../../console/dist/", import.meta.url))

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".woff2": "font/woff2",
  ".json": "application/json",
  ".txt": "text/plain; charset=utf-8"
}

const walk = (root: string, dir: string, into: Map<string, ConsoleAsset>) => {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name)
    if (entry.isDirectory()) walk(root, full, into)
    else if (entry.isFile()) {
      const relative = path.relative(root, full).split(path.sep).join("/")
      into.set(relative, {
        body: fs.readFileSync(full),
        contentType: TYPES[path.extname(entry.name).toLowerCase()] ?? "application/octet-stream"
      })
    }
  }
}

export const loadConsoleAssets = (dir: string): Effect.Effect<ConsoleAssets | undefined> =>
  Effect.sync(() => {
    if (!fs.existsSync(path.join(dir, "index.html"))) return undefined
    const files = new Map<string, ConsoleAsset>()
    walk(dir, dir, files)
    const index = files.get("index.html")
    return index === undefined ? undefined : { index, files }
  }).pipe(
    Effect.tap((assets) => assets === undefined
      ? Effect.logWarning("console: not built; /console/ answers 503 (run `npm run build`)").pipe(Effect.annotateLogs({ dir }))
      : Effect.logDebug("console: assets loaded").pipe(Effect.annotateLogs({ dir, files: assets.files.size })))
  )
