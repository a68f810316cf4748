/**
 * `svc` runs its commands from the esbuild bundles (scripts/bundle.mjs) while they match the
 * compiled packages, and from the packages themselves once they do not (after a bare `tsc -b`),
 * so a stale bundle never runs old code (docs/decisions/performance.md, session 20).
 */
import { describe, expect, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { pathToFileURL } from "node:url"
import { repositoryRoot, RETRYING, runNode, withResolveHook } from "./support/hookedNode.js"

interface Bundle {
  readonly outdir: string
}
interface BundlesModule {
  readonly bundles: { readonly server: Bundle; readonly cli: Bundle }
  readonly isFresh: (bundle: Bundle, options: { readonly dependencies: boolean }) => boolean
}
const bundlesModule = (): Promise<BundlesModule> =>
  import(pathToFileURL(path.join(repositoryRoot, "scripts/lib/bundles.mjs")).href)

const REFUSED = "an unbundled package module was loaded"
// Refuses every module of our packages' compiled output outside the bundles.
const withHook = withResolveHook(`export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context)
  if (/\\/packages\\/[a-z-]+\\/dist\\//.test(resolved.url) && !resolved.url.includes("/dist/bundle/")) throw new Error(${JSON.stringify(REFUSED)} + ": " + resolved.url)
  return resolved
}`)

const firstLine = async (args: ReadonlyArray<string>): Promise<string> =>
  (await runNode([...withHook, "scripts/svc.mjs", ...args])).output.split("\n")[0] ?? ""

describe("svc runs from its bundles", () => {
  it("the built bundles are fresh", async () => {
    const { bundles, isFresh } = await bundlesModule()
    expect(isFresh(bundles.server, { dependencies: false })).toBe(true)
    expect(isFresh(bundles.cli, { dependencies: false })).toBe(true)
  })

  it.each([["api"], ["worker"], ["migrate"]])("svc %s loads no unbundled package module", async (command) => {
    const line = await firstLine([command])
    expect(line).not.toContain(REFUSED)
    expect(line).toContain(RETRYING)
  }, 60_000)

  it("svc help (the client commands) loads no unbundled package module", async () => {
    expect(await firstLine(["help"])).toBe("usage: svc <command>")
  }, 60_000)

  it("the hook does refuse the packages: svc without its bundles cannot load under it", async () => {
    const { output, code } = await runNode([...withHook, "--input-type=module", "-e", `await import("@svc/api/migrate")`], { toExit: true })
    expect(code).toBe(1)
    expect(output).toContain(REFUSED)
  }, 60_000)

  describe("freshness", () => {
    const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "svc-bundle-"))
    const input = path.join(scratch, "input.js")
    const bundle: Bundle = { outdir: path.join(scratch, "out") }
    // After the bundle definition's own files (scripts/bundle.mjs, scripts/lib/bundles.mjs), which count as inputs too.
    const built = Date.now() / 1000 + 3_600
    const at = (file: string, seconds: number) => fs.utimesSync(file, seconds, seconds)
    const setUp = (inputs: ReadonlyArray<string>) => {
      fs.mkdirSync(bundle.outdir, { recursive: true })
      fs.writeFileSync(input, "export {}")
      at(input, built - 60)
      fs.writeFileSync(path.join(bundle.outdir, "inputs.json"), JSON.stringify({ inputs }))
      at(path.join(bundle.outdir, "inputs.json"), built)
    }

    it("fresh while every input is older than the build; stale once one is newer, missing, or the record is", async () => {
      const { isFresh } = await bundlesModule()
      setUp([input])
      expect(isFresh(bundle, { dependencies: false })).toBe(true)
      // An image layer can give every file one mtime: the same instant is not newer.
      at(input, built)
      expect(isFresh(bundle, { dependencies: false })).toBe(true)
      at(input, built + 60)
      expect(isFresh(bundle, { dependencies: false })).toBe(false)
      setUp([input, path.join(scratch, "gone.js")])
      expect(isFresh(bundle, { dependencies: false })).toBe(false)
      setUp([input])
      fs.writeFileSync(path.join(bundle.outdir, "inputs.json"), "{not json")
      expect(isFresh(bundle, { dependencies: false })).toBe(false)
      fs.rmSync(path.join(bundle.outdir, "inputs.json"))
      expect(isFresh(bundle, { dependencies: false })).toBe(false)
    })

    it("installed packages count for the build's check only (npm prune rewrites npm's record in the image)", async () => {
      const { isFresh } = await bundlesModule()
      setUp([input, "node_modules/gone/index.js"])
      // The runtime check skips node_modules inputs; the build's check finds the one that is gone.
      expect(isFresh(bundle, { dependencies: false })).toBe(true)
      expect(isFresh(bundle, { dependencies: true })).toBe(false)
    })
  })
})
