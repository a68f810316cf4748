/**
 * The test run's teardown of its Kubernetes directory: besides the cluster its state file names,
 * it stops every process whose arguments name a path in the directory (what a start that died
 * before writing the state leaves: an orphan etcd), whether or not the process leads a group,
 * and nothing else.
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { alive } from "../../../testing/kubernetes/cluster.js"
import { processesNaming, stopSharedCluster } from "../../../testing/kubernetes/runDir.js"

const started: Array<ChildProcess> = []
afterAll(() => {
  for (const child of started) child.kill("SIGKILL")
})

/** A process that runs until stopped, with `arg` among its arguments. */
const idle = (arg: string, detached: boolean) => {
  const child = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)", "--", arg], { detached, stdio: "ignore" })
  started.push(child)
  return child.pid!
}

const gone = async (pid: number) => {
  const deadline = Date.now() + 10_000
  while (alive(pid) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50))
  return !alive(pid)
}

describe("stopSharedCluster", () => {
  it("without a state file, stops what names the run directory (group leader or not) and nothing else", async () => {
    const runDir = fs.mkdtempSync(path.join(os.tmpdir(), "svc-k8s-run-"))
    const etcd = idle(`--data-dir=${runDir}/cluster/etcd`, true)
    const follower = idle(`--kubeconfig=${runDir}/cluster/kubeconfig.json`, false)
    const bystander = idle(`--data-dir=${runDir}-other/etcd`, true)
    await new Promise((resolve) => setTimeout(resolve, 200))
    expect([...processesNaming(runDir)].sort()).toEqual([etcd, follower].sort())

    await stopSharedCluster(runDir)
    expect([await gone(etcd), await gone(follower), alive(bystander), fs.existsSync(runDir)]).toEqual([true, true, true, false])
  })
})
