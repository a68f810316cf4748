// `npm run build` (and the first step of `npm start`): compile the packages, bundle what `svc`
// loads, build the console; each step only when its inputs changed. A second `npm start` used to
// spend 1.5-2 s here with nothing to do (two nested `npm run`s, TypeScript loading itself to find
// every project up to date); the checks below take a few tens of milliseconds.
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { bundleAll } from "./bundle.mjs"
import { root } from "./lib/bundles.mjs"

/** The newest mtime under `entry` (directories count: a deleted file changes its directory's). */
const newest = (entry) => {
  let stat
  try {
    stat = fs.statSync(entry)
  } catch {
    return 0
  }
  if (!stat.isDirectory()) return stat.mtimeMs
  let latest = stat.mtimeMs
  for (const name of fs.readdirSync(entry)) latest = Math.max(latest, newest(path.join(entry, name)))
  return latest
}

const mtimeOr = (file, missing) => {
  try {
    return fs.statSync(file).mtimeMs
  } catch {
    return missing
  }
}

const readJson = (file) => JSON.parse(fs.readFileSync(file, "utf8"))

/**
 * Whether every TypeScript project is older than its last build, and built after the projects it
 * references (`tsc -b` touches a dependent project's outputs whenever it rebuilds a reference).
 * Anything in doubt (no build yet, a changed setting or dependency) runs `tsc -b`, which decides
 * exactly.
 */
const compiled = () => {
  const shared = Math.max(
    newest(path.join(root, "tsconfig.base.json")),
    newest(path.join(root, "tsconfig.json")),
    newest(path.join(root, "node_modules/.package-lock.json"))
  )
  const built = (dir) => mtimeOr(path.join(dir, "dist/.tsbuildinfo"), 0)
  return readJson(path.join(root, "tsconfig.json")).references.every(({ path: project }) => {
    const dir = path.join(root, project)
    const inputs = Math.max(shared, newest(path.join(dir, "src")), newest(path.join(dir, "tsconfig.json")), newest(path.join(dir, "package.json")))
    const references = readJson(path.join(dir, "tsconfig.json")).references ?? []
    return inputs < built(dir) && references.every((reference) => built(path.resolve(dir, reference.path)) <= built(dir))
  })
}

const run = (command, args) => execFileSync(command, args, { cwd: root, stdio: "inherit" })

if (!compiled()) run(process.execPath, [path.join(root, "node_modules/typescript/bin/tsc"), "-b"])
await bundleAll()
run(process.execPath, [path.join(root, "packages/console/scripts/build-if-changed.mjs")])
