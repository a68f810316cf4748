/**
 * The service's own code makes spans through `exportedFn` and `withExportedSpan` only
 * (observability/spans.ts): an `Effect.fn` or `Effect.withSpan` added later would make its span,
 * and take its stack capture, on every call even when no exporter is configured.
 */
import { describe, expect, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as path from "node:path"

const root = path.resolve(import.meta.dirname, "../../..")
/** Where a span is made on purpose: the helpers themselves, and the engine, which decides once at start. */
const allowed = new Set(["packages/core/src/observability/spans.ts", "packages/worker/src/engine/attempt.ts"])

const sources = (dir: string): Array<string> =>
  fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name)
    if (entry.isDirectory()) return entry.name === "node_modules" || entry.name === "dist" ? [] : sources(full)
    return /\.tsx?$/.test(entry.name) ? [full] : []
  })

describe("span construction in the service's sources", () => {
  it("uses the exported-only helpers everywhere but where it is decided once", () => {
    const packages = fs.readdirSync(path.join(root, "packages")).map((name) => path.join(root, "packages", name, "src"))
    const files = packages.filter((dir) => fs.existsSync(dir)).flatMap(sources)
    expect(files.length).toBeGreaterThan(100)
    const offenders = files
      .map((file) => path.relative(root, file))
      .filter((file) => !allowed.has(file))
      .filter((file) => /\bEffect\.(fn|withSpan|useSpan|makeSpan)\(/.test(fs.readFileSync(path.join(root, file), "utf8")))
    expect(offenders).toEqual([])
  })
})
