/**
 * The whole environment of a gateway process. Nothing of the service's own environment is
 * inherited (no `DATABASE_URL`, no `SVC_*` secrets): the gateway gets a fixed allowlist, its own
 * directories, its token, and the Agent's Secrets as variables of that process only.
 */
import * as path from "node:path"
import { Redacted } from "effect"
import type { AgentLayout } from "./layout.js"

/** Variables the Agent's Secrets may not set: ours, and anything that steers Node.js or OpenClaw. */
const RESERVED_PREFIXES = ["OPENCLAW_", "NODE_", "SVC_", "NPM_", "LD_", "DYLD_"] as const
const RESERVED_NAMES = new Set(["PATH", "HOME", "TMPDIR", "TMP", "TEMP", "USER", "LOGNAME", "SHELL", "DO_NOT_TRACK", "LANG", "TZ"])
const NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/

/** Why a Secret variable name is refused, or `undefined` when it is acceptable. */
export const secretNameProblem = (name: string): string | undefined => {
  if (!NAME.test(name)) return "not a portable environment variable name"
  const upper = name.toUpperCase()
  if (RESERVED_NAMES.has(upper) || RESERVED_PREFIXES.some((prefix) => upper.startsWith(prefix))) {
    return "reserved for the gateway's own environment"
  }
  return undefined
}

export interface GatewayEnvironmentInput {
  readonly layout: AgentLayout
  /** The directory of the pinned Node.js binary (first on `PATH`). */
  readonly nodeBinDir: string
  readonly token: Redacted.Redacted<string>
  readonly secrets: Readonly<Record<string, Redacted.Redacted<string>>>
}

/** The gateway's environment. Secret names must have passed `secretNameProblem`. */
export const gatewayEnvironment = (input: GatewayEnvironmentInput): Record<string, string> => {
  const secrets: Record<string, string> = {}
  for (const [name, value] of Object.entries(input.secrets)) secrets[name] = Redacted.value(value)
  return {
    ...secrets,
    PATH: [input.nodeBinDir, "/usr/local/bin", "/usr/bin", "/bin"].join(path.delimiter),
    HOME: input.layout.home,
    TMPDIR: input.layout.tmp,
    LANG: "C.UTF-8",
    OPENCLAW_STATE_DIR: input.layout.state,
    OPENCLAW_CONFIG_PATH: input.layout.configFile,
    OPENCLAW_GATEWAY_TOKEN: Redacted.value(input.token),
    OPENCLAW_NO_RESPAWN: "1",
    OPENCLAW_SKIP_CHANNELS: "1",
    OPENCLAW_DISABLE_BONJOUR: "1",
    OPENCLAW_OFFLINE: "1",
    OPENCLAW_NO_AUTO_UPDATE: "1",
    // The rendered configuration is ours: the gateway's own config writers refuse to change it.
    OPENCLAW_CONFIG_READONLY: "1",
    // No package downloads of its own: OpenClaw's start-up doctor installs the provider plugin
    // that claims a variable it sees (e.g. `MODEL_API_KEY`) from npm, running fetched code and,
    // where the registry is unreachable, holding the start for about two minutes. Offline, npm
    // fails at once and the gateway starts without it.
    npm_config_offline: "true",
    DO_NOT_TRACK: "1",
    NODE_DISABLE_COMPILE_CACHE: "1"
  }
}
