/**
 * Prints the gzipped size of what the initial route loads: index.html plus every script and
 * stylesheet it references (the entry chunk and its static imports). Fails the build over
 * the budget of DESIGN §16 (250 kB gzipped).
 */
import * as fs from "node:fs"
import * as path from "node:path"
import * as zlib from "node:zlib"

const BUDGET = 250 * 1000
const dist = path.join(import.meta.dirname, "..", "dist")
const html = fs.readFileSync(path.join(dist, "index.html"), "utf8")
const referenced = [...html.matchAll(/(?:src|href)="\/console\/([^"]+)"/g)].map((match) => match[1])
const files = ["index.html", ...new Set(referenced)]
let total = 0
for (const file of files) {
  const gzipped = zlib.gzipSync(fs.readFileSync(path.join(dist, file)), { level: 9 }).length
  total += gzipped
  console.log(`  ${file}: ${(gzipped / 1000).toFixed(1)} kB gzipped`)
}
console.log(`console initial route: ${(total / 1000).toFixed(1)} kB gzipped (budget ${BUDGET / 1000} kB)`)
if (total > BUDGET) {
  console.error("console initial route is over its budget")
  process.exit(1)
}
