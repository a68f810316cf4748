/**
 * Gateway ports on 127.0.0.1. OpenClaw derives further ports from its base port, so Agents'
 * base ports are kept `spacing` (at least 120) apart: the candidates are `first + k * spacing`.
 *
 * A port is claimed by creating `<registry>/<port>` exclusively (atomic across processes and
 * worker replicas on this host), holding the Agent's directory. The registry is host-wide (one
 * per Unix user, `hostPortRegistry`), not per data dir: two services, or two test runs, with
 * different data dirs would otherwise both claim the first port while neither gateway listens
 * yet, and one would answer the other's readiness checks. The Agent also records its port
 * in its own directory, so it keeps the same port across restarts. A claim whose owner directory
 * no longer exists (its Namespace was torn down) is taken over. A port is checked free with a
 * real bind before a new gateway uses it; a port taken by a foreign process is given up.
 */
import * as fs from "node:fs/promises"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { readIfExists, writePrivateFile } from "./layout.js"

export interface PortRange {
  readonly first: number
  readonly spacing: number
  /** The highest base port that may be handed out. */
  readonly last: number
}

/** The claims of every gateway this Unix user runs on this host. */
export const hostPortRegistry = (): string =>
  path.join(os.tmpdir(), `svc-gateway-ports-${typeof process.getuid === "function" ? process.getuid() : "user"}`)

export const defaultPortRange: PortRange = { first: 20_000, spacing: 120, last: 64_800 }

export const candidatePorts = (range: PortRange): ReadonlyArray<number> => {
  if (range.spacing < 120) throw new Error("gateway ports must be at least 120 apart")
  const ports: Array<number> = []
  for (let port = range.first; port <= range.last; port += range.spacing) ports.push(port)
  return ports
}

/** Whether 127.0.0.1:<port> can be bound right now. */
export const isPortFree = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const server = net.createServer()
    server.once("error", () => resolve(false))
    server.listen({ host: "127.0.0.1", port, exclusive: true }, () => server.close(() => resolve(true)))
  })

export interface PortClaim {
  /** The host-wide registry directory of claims. */
  readonly registry: string
  /** The Agent's directory: the claim's content, and proof that the claim is still live. */
  readonly owner: string
  /** Where the Agent records its port. */
  readonly portFile: string
  readonly range?: PortRange | undefined
}

const claimFile = (registry: string, port: number) => path.join(registry, String(port))

const exists = (file: string) => fs.stat(file).then(() => true, () => false)

/** Claims `port` for `owner`: true when the claim is (now) the owner's. */
const tryClaim = async (registry: string, owner: string, port: number): Promise<boolean> => {
  const file = claimFile(registry, port)
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      await fs.writeFile(file, owner, { flag: "wx", mode: 0o600 })
      return true
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error
    }
    const holder = await readIfExists(file)
    if (holder === owner) return true
    // A claim left behind by an Agent whose directory is gone is free to take over.
    if (holder !== undefined && (await exists(holder))) return false
    await fs.rm(file, { force: true })
  }
  return false
}

/** Gives up `port` if `owner` holds it. */
export const releasePort = async (registry: string, owner: string, port: number): Promise<void> => {
  const file = claimFile(registry, port)
  if ((await readIfExists(file)) === owner) await fs.rm(file, { force: true })
}

/** The Agent's recorded port, if it has one and still holds its claim. */
export const recordedPort = async (claim: PortClaim): Promise<number | undefined> => {
  const recorded = Number.parseInt((await readIfExists(claim.portFile)) ?? "", 10)
  if (!Number.isInteger(recorded)) return undefined
  return (await readIfExists(claimFile(claim.registry, recorded))) === claim.owner ? recorded : undefined
}

/**
 * The Agent's port, ready for a new gateway: its recorded port when still claimed and free,
 * otherwise the first candidate it can claim that is free. Fails when every candidate is taken.
 */
export const assignPort = async (claim: PortClaim): Promise<number> => {
  await fs.mkdir(claim.registry, { recursive: true, mode: 0o700 })
  const recorded = await recordedPort(claim)
  if (recorded !== undefined) {
    if (await isPortFree(recorded)) return recorded
    await releasePort(claim.registry, claim.owner, recorded)
  }
  for (const port of candidatePorts(claim.range ?? defaultPortRange)) {
    if (port === recorded) continue
    if (!(await tryClaim(claim.registry, claim.owner, port))) continue
    if (await isPortFree(port)) {
      await writePrivateFile(claim.portFile, String(port))
      return port
    }
    await releasePort(claim.registry, claim.owner, port)
  }
  throw new Error("no free gateway port left in the configured range")
}
