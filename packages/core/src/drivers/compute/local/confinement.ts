/**
 * How far an Agent's gateway is confined on this host (DESIGN §17, docs/decisions/
 * gateway-confinement.md). Decided once per driver from what the host offers:
 *
 * - `bubblewrap` (root, `bwrap` present): the gateway runs as the Agent's own user (`setpriv`
 *   drops root after bubblewrap has built the sandbox) in new PID, IPC, UTS and cgroup
 *   namespaces and a mount namespace that shows only the system directories (read-only), the
 *   runtime (read-only), the Agent's own tree and a private `/tmp` and `/proc`: the data dir,
 *   other Agents and other processes do not exist in there.
 * - `pid-namespace` (root, no `bwrap`): the Agent's own user and `unshare --pid --mount-proc`
 *   (no other process is visible); the file system is guarded by ownership and modes only.
 * - `shared-user` (not root): gateways run as the service's user, unconfined; said in the log
 *   at start-up and in the Installation's diagnostics.
 * - `unavailable` (root without `setpriv`): nothing could drop root, so no gateway starts.
 *
 * The network namespace is shared on purpose: the gateway listens on the host's loopback for
 * the service and reaches the model provider.
 */
import { execFile } from "node:child_process"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import { promisify } from "node:util"
import type { DiagnosticsCheck } from "../driver.js"
import type { GatewayUser } from "./gatewayUser.js"

const run = promisify(execFile)

export type Confinement =
  | { readonly kind: "bubblewrap"; readonly bwrap: string; readonly setpriv: string }
  | { readonly kind: "pid-namespace"; readonly unshare: string; readonly setpriv: string }
  | { readonly kind: "shared-user" }
  | { readonly kind: "unavailable" }

/** Whether gateways run as per-Agent users (the service runs as root). */
export const usesGatewayUsers = (confinement: Confinement): boolean =>
  confinement.kind === "bubblewrap" || confinement.kind === "pid-namespace"

const firstExecutable = async (candidates: ReadonlyArray<string>): Promise<string | undefined> => {
  for (const candidate of candidates) {
    try {
      await fs.access(candidate, fs.constants.X_OK)
      return candidate
    } catch {
      // next
    }
  }
  return undefined
}

/** Whether `command` runs successfully (a tool that exists may still be refused by the kernel). */
const works = (command: string, args: ReadonlyArray<string>): Promise<boolean> =>
  run(command, [...args], { timeout: 10_000 }).then(() => true, () => false)

/** What this host offers; `uid` is injectable for tests of the non-root path. */
export const detectConfinement = async (uid: number | undefined = process.getuid?.()): Promise<Confinement> => {
  if (uid !== 0) return { kind: "shared-user" }
  const setpriv = await firstExecutable(["/usr/bin/setpriv", "/bin/setpriv"])
  if (setpriv === undefined) return { kind: "unavailable" }
  const bwrap = await firstExecutable(["/usr/bin/bwrap", "/bin/bwrap"])
  if (bwrap !== undefined && (await works(bwrap, ["--ro-bind", "/", "/", "--unshare-pid", "--", "/bin/true"]))) {
    return { kind: "bubblewrap", bwrap, setpriv }
  }
  const unshare = await firstExecutable(["/usr/bin/unshare", "/bin/unshare"])
  if (unshare !== undefined && (await works(unshare, ["--pid", "--fork", "--mount-proc", "--", "/bin/true"]))) {
    return { kind: "pid-namespace", unshare, setpriv }
  }
  return { kind: "unavailable" }
}

/** One sentence for the log and the Installation's diagnostics. */
export const describeConfinement = (confinement: Confinement): string => {
  switch (confinement.kind) {
    case "bubblewrap":
      return "Each Agent's gateway runs as its own unprivileged user in a bubblewrap sandbox (own PID namespace; only the runtime and its own directories are visible)."
    case "pid-namespace":
      return "Each Agent's gateway runs as its own unprivileged user in its own PID namespace; bubblewrap is not installed, so the file system is guarded by ownership and modes only."
    case "shared-user":
      return "The service does not run as root: every Agent's gateway runs as the service's own user and can read whatever the service can."
    case "unavailable":
      return "The service runs as root but setpriv, bubblewrap or unshare is missing: no gateway is started rather than run as root."
  }
}

/** The Installation diagnostics check for gateway confinement. */
export const confinementCheck = (confinement: Confinement): DiagnosticsCheck => ({
  name: "gateway.confinement",
  status: confinement.kind === "bubblewrap" ? "pass" : confinement.kind === "unavailable" ? "fail" : "warn",
  message: describeConfinement(confinement)
})

export interface LaunchInput {
  /** The runtime's version directory: visible read-only. */
  readonly runtimeDirectory: string
  /** The Agent's tree: the only writable place besides a private `/tmp`. */
  readonly agentRoot: string
  readonly workspace: string
  readonly user: GatewayUser | undefined
}

export interface Launch {
  readonly command: string
  readonly args: ReadonlyArray<string>
}

/** System directories shown read-only inside the sandbox (when present on the host). */
const SYSTEM_TREES = ["/usr", "/etc"] as const
const SYSTEM_LINKS_OR_TREES = ["/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"] as const

const under = (parent: string, child: string) => child === parent || child.startsWith(`${parent}/`)

/** Every ancestor of `dir`, outermost first, without `/`. */
const ancestors = (dir: string): Array<string> => {
  const found: Array<string> = []
  for (let current = path.dirname(dir); current !== path.dirname(current); current = path.dirname(current)) found.unshift(current)
  return found
}

/**
 * The bubblewrap arguments. Mount points bubblewrap creates for the binds are made 0711 (its
 * default, 0700 root, would stop the gateway user on the way to its own directory), so the
 * user can traverse them but list nothing.
 */
const bubblewrapArgs = async (input: LaunchInput): Promise<Array<string>> => {
  const args: Array<string> = []
  const shown: Array<string> = []
  for (const tree of SYSTEM_TREES) {
    args.push("--ro-bind", tree, tree)
    shown.push(tree)
  }
  for (const entry of SYSTEM_LINKS_OR_TREES) {
    const stat = await fs.lstat(entry).catch(() => undefined)
    if (stat === undefined) continue
    if (stat.isSymbolicLink()) args.push("--symlink", await fs.readlink(entry), entry)
    else if (stat.isDirectory()) {
      args.push("--ro-bind", entry, entry)
      shown.push(entry)
    }
  }
  // Name resolution may live outside /etc (a symbolic link into /run on systemd hosts).
  const resolv = await fs.realpath("/etc/resolv.conf").catch(() => undefined)
  if (resolv !== undefined && !shown.some((tree) => under(tree, resolv))) args.push("--ro-bind-try", resolv, resolv)
  args.push("--proc", "/proc", "--dev", "/dev", "--perms", "1777", "--tmpfs", "/tmp")
  const made = new Set(["/tmp", "/proc", "/dev"])
  const mountAt = (target: string, bind: "--ro-bind" | "--bind") => {
    for (const dir of ancestors(target)) {
      if (made.has(dir) || shown.some((tree) => under(tree, dir))) continue
      args.push("--perms", "0711", "--dir", dir)
      made.add(dir)
    }
    args.push(bind, target, target)
    made.add(target)
  }
  mountAt(input.runtimeDirectory, "--ro-bind")
  mountAt(input.agentRoot, "--bind")
  args.push(
    "--chdir", input.workspace,
    "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
    "--hostname", "gateway"
  )
  return args
}

/** `setpriv` to the gateway user: no supplementary groups, no capabilities, no regaining them. */
const dropRoot = (setpriv: string, user: GatewayUser): Array<string> => [
  setpriv,
  `--reuid=${user.uid}`,
  `--regid=${user.gid}`,
  "--clear-groups",
  "--inh-caps=-all",
  "--bounding-set=-all",
  "--no-new-privs",
  "--"
]

/**
 * The command that runs `argv` (absolute program first) confined as `confinement` says. The
 * spawned process stays the leader of the gateway's process group (no new session), so stopping
 * the group stops the sandbox; the PID namespace ends every process left in it.
 */
export const launchCommand = async (confinement: Confinement, input: LaunchInput, argv: ReadonlyArray<string>): Promise<Launch> => {
  const [program, ...rest] = argv
  if (program === undefined) throw new Error("nothing to launch")
  switch (confinement.kind) {
    case "shared-user":
      return { command: program, args: rest }
    case "unavailable":
      throw new Error("gateway confinement is unavailable on this host")
    case "bubblewrap":
    case "pid-namespace": {
      if (input.user === undefined || input.user.uid === 0) throw new Error("a gateway never runs as root")
      const confined = [...dropRoot(confinement.setpriv, input.user), ...argv]
      return confinement.kind === "bubblewrap"
        ? { command: confinement.bwrap, args: [...(await bubblewrapArgs(input)), "--", ...confined] }
        : { command: confinement.unshare, args: ["--pid", "--fork", "--mount-proc", "--", ...confined] }
    }
  }
}
