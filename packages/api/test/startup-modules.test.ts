/**
 * The process commands on the `local` Compute Driver never load `@kubernetes/client-node`: it is
 * about 800 modules and most of a second of every start (docs/decisions/performance.md, session
 * 19), so only `select.ts` imports the kubernetes driver, and only when it is selected. Each
 * command runs with a module hook that refuses to resolve the client; a command that reached it
 * would exit with the hook's error instead of getting as far as its database. `svc` runs the
 * bundled commands (scripts/bundle.mjs), where the client stays an external package.
 */
import { describe, expect, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as path from "node:path"
import { pathToFileURL } from "node:url"
import { repositoryRoot, RETRYING, runNode, withResolveHook } from "./support/hookedNode.js"

const REFUSED = "kubernetes client loaded"
const withHook = withResolveHook(`export async function resolve(specifier, context, next) {
  if (specifier === "@kubernetes/client-node") throw new Error(${JSON.stringify(REFUSED)})
  return next(specifier, context)
}`)
const run = (args: ReadonlyArray<string>, options: { readonly toExit?: boolean } = {}) => runNode([...withHook, ...args], options)

describe("process start-up on the local Compute Driver", () => {
  // The first line each prints once its modules have loaded: a database retry, or (the
  // credential service, given no Installation configuration) its configuration error.
  it.each([
    ["api", RETRYING],
    ["worker", RETRYING],
    ["migrate", RETRYING],
    ["credential-service", "SVC_INSTALLATION_CONFIG: svc credential-service needs a code_host Backend with a registryPath"]
  ])("svc %s does not load the Kubernetes client", async (command, firstLine) => {
    const { output } = await run(["scripts/svc.mjs", command])
    expect(output).not.toContain(REFUSED)
    expect(output.split("\n")[0]).toContain(firstLine)
  }, 60_000)

  it("the hook does refuse it: the kubernetes driver's entry cannot load under it", async () => {
    const result = await run(["--input-type=module", "-e", `await import("@svc/core/drivers/compute/kubernetes")`], { toExit: true })
    expect(result.output).toContain(REFUSED)
    expect(result.code).toBe(1)
  }, 60_000)

  it("the hook does refuse it in the bundle too: the kubernetes driver's chunk cannot load under it", async () => {
    const bundle = path.join(repositoryRoot, "packages/api/dist/bundle")
    const chunks = fs.readdirSync(bundle).filter((name) => /^kubernetes-[A-Z0-9]+\.mjs$/.test(name))
    expect(chunks).toHaveLength(1)
    const chunk = pathToFileURL(path.join(bundle, chunks[0]!)).href
    const result = await run(["--input-type=module", "-e", `await import(${JSON.stringify(chunk)})`], { toExit: true })
    expect(result.output).toContain(REFUSED)
    expect(result.code).toBe(1)
  }, 60_000)
})
