/**
 * The run's Kubernetes directory (created by globalSetup.ts): the shared cluster's state file,
 * or why it failed to start. Free of vitest imports, so globalSetup can stop the cluster.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { type ClusterState, stopCluster, stopGroup } from "./cluster.js"

export const stateFile = (runDir: string) => path.join(runDir, "cluster.json")
export const failedFile = (runDir: string) => path.join(runDir, "cluster-failed.txt")

export const readState = (runDir: string): ClusterState | undefined =>
  fs.existsSync(stateFile(runDir)) ? (JSON.parse(fs.readFileSync(stateFile(runDir), "utf8")) as ClusterState) : undefined

/** Every process but this one whose arguments name a path in `dir` (Linux's /proc). */
export const processesNaming = (dir: string): ReadonlyArray<number> =>
  fs.readdirSync("/proc").filter((entry) => /^\d+$/.test(entry) && Number(entry) !== process.pid).filter((entry) => {
    try {
      return fs.readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0").some((arg) => arg.includes(`${dir}/`))
    } catch {
      return false // gone meanwhile, or not ours to read
    }
  }).map(Number)

/**
 * globalSetup's teardown: stops the cluster if a test file started one, then anything else
 * launched in the run's directory. A start whose test process died before it wrote the state
 * file left etcd (and maybe more) running; every cluster process names the directory in its
 * arguments (etcd's data directory, the others' certificates and kubeconfig).
 */
export const stopSharedCluster = async (runDir: string) => {
  const state = readState(runDir)
  if (state !== undefined) await stopCluster(state)
  for (const pid of processesNaming(runDir)) await stopGroup(pid)
  fs.rmSync(runDir, { recursive: true, force: true })
}
