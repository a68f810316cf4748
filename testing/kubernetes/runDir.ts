/**
 * The run's Kubernetes directory (created by globalSetup.ts): the shared cluster's state file,
 * or why it failed to start. Free of vitest imports, so globalSetup can stop the cluster.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { type ClusterState, stopCluster } from "./cluster.js"

export const stateFile = (runDir: string) => path.join(runDir, "cluster.json")
export const failedFile = (runDir: string) => path.join(runDir, "cluster-failed.txt")

export const readState = (runDir: string): ClusterState | undefined =>
  fs.existsSync(stateFile(runDir)) ? (JSON.parse(fs.readFileSync(stateFile(runDir), "utf8")) as ClusterState) : undefined

/** globalSetup's teardown: stops the cluster if a test file started one. */
export const stopSharedCluster = async (runDir: string) => {
  const state = readState(runDir)
  if (state !== undefined) await stopCluster(state)
  fs.rmSync(runDir, { recursive: true, force: true })
}
