/**
 * What a Configuration's `values` (the native OpenClaw document, SPEC 2.8) may not say, because
 * it would point the Agent's gateway at the host instead of its own directories
 * (docs/decisions/gateway-confinement.md): refused at admission with 400 `INVALID_VALUE` and a
 * pointer, and dropped again when the gateway's configuration is rendered (for documents stored
 * earlier or rendered from a Preset).
 *
 * - Host paths: a key that names a file, directory, binary or path list. Recognised by name
 *   (`path`, `paths`, `file`, `cwd`, `workspace`, `agentDir`, `root`, `binds`, and names ending in
 *   `File(s)`, `Path(s)`, `Dir(s)`, `Root(s)`, `Bin`, `Binary`, `Template` of a directory), which
 *   covers every such key in the OpenClaw 2026.9.6 configuration schema (`openclaw config schema`)
 *   and the ones a later version is likely to add. URL paths of HTTP routes (`webhookPath`,
 *   `callbackPath`, `basePath`, `hooks.path`, `...webhook.path`, `...serve.path`, `...tailscale.path`,
 *   `...match.path`) are not host paths and stay allowed.
 * - `env.vars` entries, and strings directly under `env` (OpenClaw sets both in the gateway's
 *   environment, `collectConfigEnvVarsByTarget` of 2026.9.6), that would set a reserved variable
 *   (the gateway's own `OPENCLAW_*`, `NODE_*`, `PATH`, `HOME`, ...), surrounding blanks
 *   ignored as OpenClaw ignores them: the same rule as Secret binding destinations.
 */
import { reservedEnvironmentName } from "./environment.js"

const PATH_NAMES = new Set(["path", "paths", "file", "files", "cwd", "workspace", "agentDir", "root", "roots", "binds", "binary", "store", "pathPrepend"])
const PATH_SUFFIX = /[a-z](File|Files|Path|Paths|Dir|Dirs|Root|Roots|Bin|Binary|DirTemplate)$/
/** URL paths of HTTP routes and URL roots, not host paths. */
const URL_NAMES = new Set(["webhookPath", "callbackPath", "basePath", "apiRoot"])
const URL_PARENTS = new Set(["webhook", "serve", "tailscale", "match"])

const isPathKey = (segments: ReadonlyArray<string | number>, key: string): boolean => {
  if (URL_NAMES.has(key)) return false
  const parent = segments[segments.length - 1]
  if (key === "path" && (typeof parent === "string" && URL_PARENTS.has(parent))) return false
  if (key === "path" && segments.length === 1 && parent === "hooks") return false
  // `memory.search.store` and the like are objects of settings; only a string or list is a path.
  return PATH_NAMES.has(key) || PATH_SUFFIX.test(key) || key === "workspaceTemplate"
}

export interface RefusedGatewayValue {
  readonly path: ReadonlyArray<string | number>
  readonly reason: string
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const namesHostPath = (value: unknown): boolean => typeof value === "string" || Array.isArray(value)

/** Every refused key in `values` (in document order), each with its JSON path. */
export const refusedGatewayValues = (values: unknown): ReadonlyArray<RefusedGatewayValue> => {
  const found: Array<RefusedGatewayValue> = []
  const visit = (value: unknown, at: ReadonlyArray<string | number>): void => {
    if (Array.isArray(value)) {
      value.forEach((item, index) => visit(item, [...at, index]))
      return
    }
    if (!isObject(value)) return
    for (const [key, item] of Object.entries(value)) {
      const here = [...at, key]
      const setsVariable = (at.length === 2 && at[0] === "env" && at[1] === "vars") ||
        (at.length === 1 && at[0] === "env" && key !== "vars" && key !== "shellEnv")
      // OpenClaw trims a name before it sets the variable (`normalizeEnvVarKey`).
      if (setsVariable && reservedEnvironmentName(key.trim()) !== undefined) {
        found.push({ path: here, reason: "sets a variable reserved for the gateway's own environment" })
      } else if (namesHostPath(item) && isPathKey(at, key)) {
        found.push({ path: here, reason: "a host path: the gateway uses its own directories only" })
      } else {
        visit(item, here)
      }
    }
  }
  visit(values, [])
  return found
}

/** A copy of `values` without any refused key. */
export const withoutRefusedGatewayValues = <A>(values: A): A => {
  const refused = refusedGatewayValues(values)
  if (refused.length === 0) return values
  const copy = structuredClone(values) as unknown
  for (const { path } of refused) {
    let parent: unknown = copy
    for (const segment of path.slice(0, -1)) parent = (parent as Record<string | number, unknown>)[segment]
    if (isObject(parent)) delete parent[path[path.length - 1] as string]
  }
  return copy as A
}
