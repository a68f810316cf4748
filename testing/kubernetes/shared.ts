/**
 * One cluster per test run, shared by every Kubernetes test file: the first file that asks starts
 * it (under a lock: an exclusive `mkdir` in the run's directory, which `globalSetup.ts` creates
 * and whose teardown stops whatever was started); the others wait for its state file. Test runs
 * without a Kubernetes test file start nothing.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { inject } from "vitest"
import { alive, type ClusterState, startCluster } from "./cluster.js"
import { failedFile, readState, stateFile } from "./runDir.js"

declare module "vitest" {
  export interface ProvidedContext {
    k8sRunDir: string
  }
}

const startOnce = async (runDir: string): Promise<ClusterState> => {
  try {
    const state = await startCluster(path.join(runDir, "cluster"))
    fs.writeFileSync(`${stateFile(runDir)}.tmp`, JSON.stringify(state))
    fs.renameSync(`${stateFile(runDir)}.tmp`, stateFile(runDir))
    return state
  } catch (error) {
    fs.writeFileSync(failedFile(runDir), String(error instanceof Error ? error.stack : error))
    throw error
  }
}

/** The test process that took the lock, written right after taking it. */
const starterFile = (runDir: string) => path.join(runDir, "lock", "pid")

/**
 * Waits for the starter's state file. A starter that ended without writing it or its failure
 * (its test file torn down mid-start) fails the wait instead of leaving every other Kubernetes
 * file waiting for ever.
 */
const waitForState = async (runDir: string): Promise<ClusterState> => {
  for (;;) {
    const state = readState(runDir)
    if (state !== undefined) return state
    if (fs.existsSync(failedFile(runDir))) throw new Error(`the shared cluster failed to start:\n${fs.readFileSync(failedFile(runDir), "utf8")}`)
    const starter = fs.existsSync(starterFile(runDir)) ? Number(fs.readFileSync(starterFile(runDir), "utf8")) : undefined
    if (starter !== undefined && !alive(starter) && readState(runDir) === undefined) {
      throw new Error(`the test process starting the shared cluster (pid ${starter}) ended before the cluster was up`)
    }
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
}

/** The run's cluster, started by whichever test file asks first. */
export const sharedCluster = async (): Promise<ClusterState> => {
  const runDir = inject("k8sRunDir")
  try {
    fs.mkdirSync(path.join(runDir, "lock"))
  } catch {
    return waitForState(runDir)
  }
  fs.writeFileSync(starterFile(runDir), String(process.pid))
  return startOnce(runDir)
}
