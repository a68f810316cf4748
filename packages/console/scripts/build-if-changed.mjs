/**
 * Builds the console only when what it is built from changed: its own sources and settings, the
 * lockfile, and the compiled `@svc/core` it bundles (the typed client). `npm start` and
 * `npm test` call the root build each time; a Vite build takes 5-20 s on two cores, a digest of
 * the inputs a fraction of a second. The digest of the last build is kept in dist/.inputs.
 */
import { execFileSync } from "node:child_process"
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"

const root = path.join(import.meta.dirname, "..")
const repo = path.join(root, "..", "..")
const inputs = [
  path.join(root, "src"),
  path.join(root, "index.html"),
  path.join(root, "vite.config.ts"),
  path.join(root, "tsconfig.json"),
  path.join(root, "package.json"),
  path.join(root, "scripts"),
  path.join(repo, "package-lock.json"),
  path.join(repo, "packages", "core", "dist")
]

const files = (entry) => {
  if (!fs.existsSync(entry)) return []
  if (!fs.statSync(entry).isDirectory()) return [entry]
  return fs.readdirSync(entry).sort().flatMap((name) => files(path.join(entry, name)))
}

const hash = createHash("sha256")
for (const file of inputs.flatMap(files)) {
  hash.update(path.relative(repo, file)).update("\0").update(fs.readFileSync(file)).update("\0")
}
const digest = hash.digest("hex")
const stamp = path.join(root, "dist", ".inputs")
if (fs.existsSync(stamp) && fs.readFileSync(stamp, "utf8") === digest && fs.existsSync(path.join(root, "dist", "index.html"))) {
  console.log("console: up to date (inputs unchanged since the last build)")
  process.exit(0)
}
const npm = process.platform === "win32" ? "npm.cmd" : "npm"
execFileSync(npm, ["run", "build:always"], { cwd: root, stdio: "inherit" })
fs.writeFileSync(stamp, digest)
