/**
 * Where an Agent's gateway lives on this host: `<dataDir>/namespaces/<nsId>/agents/<agentId>/`,
 * every directory mode 0700, one concern per subdirectory. Two gateways never share a state
 * directory (OpenClaw does not support it), which this layout guarantees: one Agent, one gateway.
 */
import * as fs from "node:fs/promises"
import * as path from "node:path"

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

/** Creates (or repairs the modes of) every directory of the Agent. The Namespace dir must exist. */
export const prepareAgentLayout = async (layout: AgentLayout): Promise<void> => {
  await ownerOnlyDirectory(path.dirname(layout.root))
  await ownerOnlyDirectory(layout.root)
  for (const dir of [layout.home, layout.state, layout.tmp, layout.workspace, layout.logs]) {
    await ownerOnlyDirectory(dir)
  }
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
