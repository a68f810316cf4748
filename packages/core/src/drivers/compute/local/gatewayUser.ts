/**
 * The Unix user an Agent's gateway runs as when the service runs as root (DESIGN §17): one
 * system user per Agent, created on demand, removed at the Agent's teardown. No login shell, no
 * home directory (the gateway's `HOME` is in the Agent's tree), its own group and no other.
 *
 * The name is derived from the Agent's directory (which holds the Agent id and the data dir), so
 * two services or test runs on one host with the same Agent ids never share a user, and a
 * restarted worker finds the same user again: `svc-a-` and 12 hex digits of a SHA-256 (18
 * characters; `useradd` allows 32).
 */
import { execFile } from "node:child_process"
import { createHash } from "node:crypto"
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

/**
 * The user, created when missing. `useradd` holds a lock on the account files: two workers
 * creating users at once may see "cannot lock" (exit 10) or, for the same user, "exists" (exit
 * 9); both are retried by looking again.
 */
export const ensureGatewayUser = async (name: string): Promise<GatewayUser> => {
  if (!NAME.test(name)) throw new Error("not a gateway user name")
  for (let attempt = 0; ; attempt++) {
    const existing = await lookupGatewayUser(name)
    if (existing !== undefined) return existing
    try {
      await run("useradd", ["--system", "--user-group", "--no-create-home", "--home-dir", "/nonexistent", "--shell", "/usr/sbin/nologin", name])
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
      await run("userdel", [name])
      return
    } catch (error) {
      const code = exitCode(error)
      if (code === 6) return // no such user
      if (code !== 10 || attempt >= 20) throw error
      await sleep(100 + Math.floor(Math.random() * 200))
    }
  }
}
