/**
 * The Unix user an Agent's gateway runs as when the service runs as root (DESIGN §17): one
 * system user per Agent, created on demand, removed at the Agent's teardown. No login shell, no
 * home directory (the gateway's `HOME` is in the Agent's tree), its own group and no other.
 *
 * The name is derived from the Agent's directory (which holds the Agent id and the data dir), so
 * two services or test runs on one host with the same Agent ids never share a user, and a
 * restarted worker finds the same user again: `svc-a-` and 12 hex digits of a SHA-256 (18
 * characters; `useradd` allows 32). The account's comment names the Agent's directory, so users
 * whose Namespace directory is gone (a data dir removed without deleting its Agents, as tests
 * do) can be found and removed (`removeOrphanGatewayUsers`).
 */
import { execFile } from "node:child_process"
import { createHash } from "node:crypto"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import { promisify } from "node:util"

const run = promisify(execFile)

export interface GatewayUser {
  readonly name: string
  readonly uid: number
  readonly gid: number
}

export const gatewayUserName = (agentRoot: string): string =>
  `svc-a-${createHash("sha256").update(agentRoot).digest("hex").slice(0, 12)}`

const NAME = /^svc-a-[0-9a-f]{12}$/

/**
 * `useradd` and `userdel` run one at a time on this host, under our own lock: measured in a
 * container, concurrent `useradd`s each succeeded and the last rename of /etc/passwd won, so a
 * created user vanished again (and its uid could later be handed to another Agent).
 */
// In /run (root-only), not the world-writable /run/lock, where anyone could hold the lock.
const ACCOUNT_LOCK = "/run/svc-gateway-users.lock"
const lockedAccounts = async (command: string, args: ReadonlyArray<string>) => {
  const lock = await fs.stat(path.dirname(ACCOUNT_LOCK)).then(() => ACCOUNT_LOCK, () => "/etc/.svc-gateway-users.lock")
  return run("flock", ["--exclusive", "--timeout", "60", lock, command, ...args])
}

const exitCode = (error: unknown): number | undefined => {
  const code = (error as { code?: unknown }).code
  return typeof code === "number" ? code : undefined
}

/** The user's ids, or `undefined` when no such user exists. */
export const lookupGatewayUser = async (name: string): Promise<GatewayUser | undefined> => {
  try {
    const uid = Number.parseInt((await run("id", ["-u", name])).stdout.trim(), 10)
    const gid = Number.parseInt((await run("id", ["-g", name])).stdout.trim(), 10)
    return Number.isInteger(uid) && Number.isInteger(gid) ? { name, uid, gid } : undefined
  } catch (error) {
    if (exitCode(error) === 1) return undefined
    throw error
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

const COMMENT_PREFIX = "svc agent "

/**
 * The user, created when missing. `useradd` holds a lock on the account files: two workers
 * creating users at once may see "cannot lock" (exit 10) or, for the same user, "exists" (exit
 * 9); both are retried by looking again.
 */
export const ensureGatewayUser = async (name: string, agentRoot?: string): Promise<GatewayUser> => {
  if (!NAME.test(name)) throw new Error("not a gateway user name")
  // The account files separate fields with ":" and lines with newlines.
  const comment = agentRoot !== undefined && !/[:\n]/.test(agentRoot) ? ["--comment", `${COMMENT_PREFIX}${agentRoot}`] : []
  for (let attempt = 0; ; attempt++) {
    const existing = await lookupGatewayUser(name)
    if (existing !== undefined) return existing
    try {
      await lockedAccounts("useradd", [
        "--system", "--user-group", "--no-create-home", "--home-dir", "/nonexistent", "--shell", "/usr/sbin/nologin", ...comment, name
      ])
    } catch (error) {
      const code = exitCode(error)
      if ((code !== 9 && code !== 10) || attempt >= 20) throw error
      await sleep(100 + Math.floor(Math.random() * 200))
    }
  }
}

/** Removes the user and its group; an absent user is fine. Its processes must be gone. */
export const removeGatewayUser = async (name: string): Promise<void> => {
  if (!NAME.test(name)) throw new Error("not a gateway user name")
  for (let attempt = 0; ; attempt++) {
    try {
      await lockedAccounts("userdel", [name])
      return
    } catch (error) {
      const code = exitCode(error)
      if (code === 6) return // no such user
      if (code !== 10 || attempt >= 20) throw error
      await sleep(100 + Math.floor(Math.random() * 200))
    }
  }
}

/**
 * Removes every gateway user whose Agent's Namespace directory no longer exists; returns their
 * names. Users are created only once that directory exists, so a starting gateway is never hit.
 */
export const removeOrphanGatewayUsers = async (): Promise<ReadonlyArray<string>> => {
  const removed: Array<string> = []
  const accounts = (await run("getent", ["passwd"])).stdout.split("\n")
  for (const account of accounts) {
    const [name, , , , comment] = account.split(":")
    if (name === undefined || !NAME.test(name) || comment === undefined || !comment.startsWith(COMMENT_PREFIX)) continue
    const namespaceDir = path.dirname(path.dirname(comment.slice(COMMENT_PREFIX.length)))
    const exists = await fs.stat(namespaceDir).then(() => true, () => false)
    if (exists) continue
    await removeGatewayUser(name)
    removed.push(name)
  }
  return removed
}
