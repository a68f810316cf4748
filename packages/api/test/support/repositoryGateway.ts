/**
 * Reaching a repository the way a running gateway would: its process found by its state
 * directory, its exact environment read from `/proc/<pid>/environ`, and `git` run inside its
 * mount namespace as its user with nothing but that environment.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { expect } from "@effect/vitest"
import { processEnvironment, runWith } from "../../../../testing/repositoryWorld.js"
import type { GitResult } from "../../../../testing/gitClient.js"

export interface GatewayProcess {
  readonly pid: number
  readonly uid: number
  readonly gid: number
  readonly env: Readonly<Record<string, string>>
}

const ids = (pid: number, field: "Uid" | "Gid"): number => {
  const line = fs.readFileSync(`/proc/${pid}/status`, "utf8").split("\n").find((l) => l.startsWith(`${field}:`))
  return Number(line?.split(/\s+/)[1])
}

/**
 * The gateway's own process (the OpenClaw node process, below the launcher): the one that has
 * the Agent's state directory in its environment and the least privilege.
 */
export const gatewayProcess = (agentRoot: string): GatewayProcess => {
  const state = `OPENCLAW_STATE_DIR=${path.join(agentRoot, "state")}`
  const candidates: Array<GatewayProcess> = []
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^[0-9]+$/.test(entry)) continue
    const pid = Number(entry)
    try {
      if (!fs.readFileSync(`/proc/${pid}/environ`, "utf8").split("\0").includes(state)) continue
      candidates.push({ pid, uid: ids(pid, "Uid"), gid: ids(pid, "Gid"), env: processEnvironment(pid) })
    } catch {
      // gone meanwhile
    }
  }
  candidates.sort((a, b) => b.uid - a.uid || b.pid - a.pid)
  const found = candidates[0]
  if (found === undefined) throw new Error(`no gateway process for ${agentRoot}`)
  return found
}

/** `git ls-remote https://github.com/<repository>` with exactly the gateway's environment, where it runs. */
export const lsRemoteAsGateway = (gateway: GatewayProcess, repository: string): Promise<GitResult> =>
  runWith(gateway.env, ["git", "ls-remote", `https://github.com/${repository}`], [
    "/usr/bin/nsenter", `--target=${gateway.pid}`, "--mount", "--",
    "/usr/bin/setpriv", `--reuid=${gateway.uid}`, `--regid=${gateway.gid}`, "--clear-groups", "--"
  ])

export const expectListed = (result: GitResult) => {
  expect({ status: result.status, stderr: result.stderr }).toEqual({ status: 0, stderr: "" })
  expect(result.stdout).toMatch(/^[0-9a-f]{40}\tHEAD\n[0-9a-f]{40}\trefs\/heads\/main\n$/)
}

/** The listener's answer to a Git discovery request with `bearer`. */
export const listenerStatus = (listenerUrl: string, bearer: string): Promise<number> =>
  fetch(`${listenerUrl}/acme/widgets.git/info/refs?service=git-upload-pack`, {
    headers: { authorization: `Basic ${Buffer.from(`x-access-token:${bearer}`).toString("base64")}` }
  }).then(async (response) => {
    await response.arrayBuffer()
    return response.status
  })

/** The bearer in a revision's client material. */
export const materialBearer = (agentRoot: string, revisionId: string): string =>
  fs.readFileSync(path.join(agentRoot, "repo-credentials", revisionId, "bearers", "acme+widgets"), "utf8")
