#!/usr/bin/env node
// Records how long each test file took in the last `vitest run` (vitest's results cache), into
// testing/test-durations.json, which testing/sequencer.ts orders the next runs by. Run it after
// a full `npm test`; files the run did not include keep their recorded time, files that no longer
// exist are dropped.
//
//   npm run test:durations              (this checkout's last run)
//   node scripts/test-durations.mjs DIR  (the last run in another checkout, e.g. a CI clone)
import fs from "node:fs"
import path from "node:path"

const root = path.resolve(import.meta.dirname, "..")
const target = path.join(root, "testing", "test-durations.json")
const cacheDir = path.join(path.resolve(process.argv[2] ?? root), "node_modules", ".vite", "vitest")

const caches = fs.existsSync(cacheDir)
  ? fs.readdirSync(cacheDir).map((dir) => path.join(cacheDir, dir, "results.json")).filter((file) => fs.existsSync(file))
  : []
if (caches.length === 0) {
  console.error(`no vitest results under ${cacheDir}: run npm test first`)
  process.exit(1)
}

const recorded = fs.existsSync(target) ? JSON.parse(fs.readFileSync(target, "utf8")) : {}
let updated = 0
for (const file of caches) {
  for (const [key, result] of JSON.parse(fs.readFileSync(file, "utf8")).results) {
    // A failed file's time says where it stopped, not how long it takes.
    if (result.failed || typeof result.duration !== "number") continue
    recorded[key] = Math.max(1, Math.round(result.duration / 1000))
    updated++
  }
}
const exists = (key) => fs.existsSync(path.join(root, key.slice(key.indexOf(":") + 1)))
const kept = Object.fromEntries(Object.entries(recorded).filter(([key]) => exists(key)).sort(([a], [b]) => a.localeCompare(b)))
fs.writeFileSync(target, `${JSON.stringify(kept, null, 2)}\n`)
console.log(`${updated} files recorded; ${Object.keys(kept).length} in ${path.relative(root, target)}`)
