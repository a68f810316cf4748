/**
 * Where an Agent's gateway lives on this host: `<dataDir>/namespaces/<nsId>/agents/<agentId>/`,
 * every directory mode 0700, one concern per subdirectory. When gateways run as their own users
 * (DESIGN §17) the subdirectories belong to the Agent's user (0700) and the Agent's directory
 * itself stays the service's (0711: traversable, not listable), so the supervisor's files in it
 * (`gateway.json` with the token, `port`, the rendered configuration) can be neither replaced nor
 * read-and-changed by the gateway. Two gateways never share a state
 * directory (OpenClaw does not support it), which this layout guarantees: one Agent, one gateway.
 */
import * as fs from "node:fs/promises"
import * as path from "node:path"
import type { GatewayUser } from "./gatewayUser.js"

/** Agent ids become path segments: only this shape is accepted (no separators, no dots). */
const SAFE_SEGMENT = /^[A-Za-z0-9_-]{1,128}$/

export const isSafeSegment = (value: string): boolean => SAFE_SEGMENT.test(value)

export interface AgentLayout {
  readonly root: string
  /** `HOME` of the gateway process. */
  readonly home: string
  /** `OPENCLAW_STATE_DIR`. */
  readonly state: string
  /** `TMPDIR`. */
  readonly tmp: string
  /** `agents.defaults.workspace`: AGENTS.md, SOUL.md, IDENTITY.md, USER.md live here. */
  readonly workspace: string
  readonly logs: string
  /** `OPENCLAW_CONFIG_PATH`: the rendered configuration. */
  readonly configFile: string
  /** The supervisor's record of the running process (pid, port, token, revision). */
  readonly processFile: string
  /** The Agent's persisted gateway port. */
  readonly portFile: string
  readonly logFile: string
}

export const agentsRoot = (namespaceDir: string): string => path.join(namespaceDir, "agents")

export const agentLayout = (namespaceDir: string, agentId: string): AgentLayout => {
  const root = path.join(agentsRoot(namespaceDir), agentId)
  return {
    root,
    home: path.join(root, "home"),
    state: path.join(root, "state"),
    tmp: path.join(root, "tmp"),
    workspace: path.join(root, "workspace"),
    logs: path.join(root, "logs"),
    configFile: path.join(root, "openclaw.json"),
    processFile: path.join(root, "gateway.json"),
    portFile: path.join(root, "port"),
    logFile: path.join(root, "logs", "gateway.log")
  }
}

const ownerOnlyDirectory = async (dir: string): Promise<void> => {
  await fs.mkdir(dir, { recursive: true, mode: 0o700 })
  // mkdir's mode is masked by the umask and ignored for an existing directory.
  await fs.chmod(dir, 0o700)
}

/** The directories the gateway itself writes to. */
const gatewayDirectories = (layout: AgentLayout) => [layout.home, layout.state, layout.tmp, layout.workspace, layout.logs]

/**
 * Creates (or repairs the modes and owners of) every directory of the Agent. The Namespace dir
 * must exist. With an `owner`, the gateway's directories become its (not recursively: what the
 * gateway wrote is already its own, and a recursive change could be steered by its links).
 */
export const prepareAgentLayout = async (layout: AgentLayout, owner?: GatewayUser): Promise<void> => {
  await ownerOnlyDirectory(path.dirname(layout.root))
  await ownerOnlyDirectory(layout.root)
  if (owner !== undefined) await fs.chmod(layout.root, 0o711)
  for (const dir of gatewayDirectories(layout)) {
    await ownerOnlyDirectory(dir)
    if (owner !== undefined) await fs.lchown(dir, owner.uid, owner.gid)
  }
}

/**
 * Adds search (x) for others on `dir` and every directory above it, never read: used when no
 * mount namespace hides the way to the Agent's tree, so its user can reach it (and the runtime)
 * without listing anything on the way.
 */
export const makeTraversable = async (dir: string): Promise<void> => {
  for (let current = path.resolve(dir); current !== path.dirname(current); current = path.dirname(current)) {
    const mode = (await fs.stat(current)).mode
    if ((mode & 0o001) === 0) await fs.chmod(current, (mode & 0o7777) | 0o001)
  }
}

/** Hands the rendered configuration to the gateway read-only: the service's, group-readable by the user. */
export const shareReadOnly = async (file: string, owner: GatewayUser): Promise<void> => {
  await fs.lchown(file, 0, owner.gid)
  await fs.chmod(file, 0o640)
}

/** Writes a file owner-only, atomically (temporary sibling, then rename). */
export const writePrivateFile = async (file: string, content: string | Uint8Array): Promise<void> => {
  const temporary = `${file}.${process.pid}.${Date.now()}.tmp`
  await fs.writeFile(temporary, content, { mode: 0o600, flag: "wx" })
  try {
    await fs.rename(temporary, file)
  } catch (error) {
    await fs.rm(temporary, { force: true })
    throw error
  }
}

/** A file's content, or `undefined` when it does not exist. */
export const readIfExists = async (file: string): Promise<string | undefined> => {
  try {
    return await fs.readFile(file, "utf8")
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined
    throw error
  }
}
