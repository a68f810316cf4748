/**
 * The TCP ports a process listens on (Linux): its socket inodes (`/proc/<pid>/fd`) matched with
 * the LISTEN entries of `/proc/net/tcp` and `/proc/net/tcp6`. Tells whether a process opened a
 * port it should not have.
 */
import * as fs from "node:fs"

const LISTEN = "0A"

const socketInodes = (pid: number): Set<string> => {
  const inodes = new Set<string>()
  for (const fd of fs.readdirSync(`/proc/${pid}/fd`)) {
    try {
      const match = /^socket:\[(\d+)\]$/.exec(fs.readlinkSync(`/proc/${pid}/fd/${fd}`))
      if (match) inodes.add(match[1]!)
    } catch {
      // closed while reading
    }
  }
  return inodes
}

export const listeningPorts = (pid: number): ReadonlyArray<number> => {
  const inodes = socketInodes(pid)
  const ports = new Set<number>()
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    for (const line of fs.readFileSync(table, "utf8").split("\n").slice(1)) {
      const fields = line.trim().split(/\s+/)
      if (fields.length < 10 || fields[3] !== LISTEN || !inodes.has(fields[9]!)) continue
      ports.add(parseInt(fields[1]!.split(":")[1]!, 16))
    }
  }
  return [...ports].sort((a, b) => a - b)
}
