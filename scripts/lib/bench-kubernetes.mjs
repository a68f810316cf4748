// The `kubernetes` row of bench:agents: testing/kubernetes/bench.ts (a real API server and
// controllers with the test node, in its own process through vite-node) prints its runs as one
// JSON line; this formats them.
import { spawn } from "node:child_process"
import * as path from "node:path"

const root = path.resolve(import.meta.dirname, "..", "..")
const fmt = (n) => n.toFixed(0)

const runBench = () =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(root, "node_modules/vite-node/vite-node.mjs"), path.join(root, "testing/kubernetes/bench.ts")], {
      cwd: root,
      stdio: ["ignore", "pipe", "inherit"]
    })
    let output = ""
    child.stdout.on("data", (chunk) => (output += chunk))
    child.once("exit", (code) => {
      const line = output.split("\n").reverse().find((l) => l.startsWith('{"runs"'))
      if (code !== 0 || line === undefined) return reject(new Error(`testing/kubernetes/bench.ts exited ${code}`))
      resolve(JSON.parse(line).runs)
    })
  })

export const kubernetesRow = async () => {
  const runs = await runBench()
  const lines = [
    "",
    "kubernetes Compute Driver (kube-apiserver and controllers v1.20.2, the test node running the Pod's gateway on loopback): start → the Pod's gateway spawned (the driver's applies, controllers, binding), → Deployment Available, → start returned (readiness check and model probe):",
    "",
    "| run | start → gateway spawned ms | start → Available ms | start → returned ms |",
    "|---|---:|---:|---:|"
  ]
  runs.forEach((r, i) => lines.push(`| ${i + 1} | ${fmt(r.toSpawnMs)} | ${fmt(r.toAvailableMs)} | ${fmt(r.toReturnedMs)} |`))
  return lines.join("\n")
}
