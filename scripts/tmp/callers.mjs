// Callers of a function in a .cpuprofile: the stacks (N frames up) under which it was sampled.
import fs from "node:fs"
const [file, fn, depth = "8"] = process.argv.slice(2)
const p = JSON.parse(fs.readFileSync(file, "utf8"))
const byId = new Map(p.nodes.map((x) => [x.id, x])); const parent = new Map()
for (const x of p.nodes) for (const c of x.children ?? []) parent.set(c, x.id)
const name = (x) => `${x.callFrame.functionName || "(anon)"}@${x.callFrame.url.replace(/^.*node_modules\//, "").replace(/^.*packages\//, "")}:${x.callFrame.lineNumber}`
const stacks = new Map(); let total = 0
p.samples.forEach((id, i) => {
  const x = byId.get(id); if (x.callFrame.functionName !== fn) return
  total += p.timeDeltas[i]
  const s = []; let cur = parent.get(id)
  while (cur !== undefined && s.length < +depth) { s.push(name(byId.get(cur))); cur = parent.get(cur) }
  const k = s.join(" < "); stacks.set(k, (stacks.get(k) ?? 0) + p.timeDeltas[i])
})
for (const [k, v] of [...stacks].sort((a, b) => b[1] - a[1]).slice(0, 12)) console.log((100 * v / total).toFixed(1) + "% " + k + "\n")
