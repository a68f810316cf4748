import fs from "node:fs"
const [file, n = "40"] = process.argv.slice(2)
const p = JSON.parse(fs.readFileSync(file, "utf8"))
const byId = new Map(p.nodes.map((x) => [x.id, x]))
const self = new Map(); let busy = 0
p.samples.forEach((id, i) => {
  const cf = byId.get(id).callFrame; const d = p.timeDeltas[i] ?? 0
  if (cf.functionName === "(idle)" || cf.functionName === "dispatch" ) return
  busy += d
  const key = cf.url ? cf.url.replace(/^.*node_modules\//, "").replace(/^file:\/\/.*\/packages\//, "pkg/") : cf.functionName
  self.set(key, (self.get(key) ?? 0) + d)
})
console.log("busy ms", (busy/1000).toFixed(0))
for (const [k, v] of [...self].sort((a, b) => b[1] - a[1]).slice(0, +n)) console.log((100 * v / busy).toFixed(1).padStart(5) + "%  " + k)
