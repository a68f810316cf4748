/**
 * The order the run starts its test files in: the longest first, by what an earlier full run
 * recorded (`testing/test-durations.json`, refreshed with `npm run test:durations` after one).
 *
 * Two forks share the run. Without a results cache (every fresh clone, so every CI run) vitest
 * starts the largest files first, and file size says little about time here: a short file that
 * starts two real gateways takes minutes, a long one of pure validation takes seconds. When a
 * slow file started late, one fork ran it alone at the end while the other had nothing left.
 * Longest first leaves the short files for the end, where they even the two forks out.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { BaseSequencer, type TestSpecification } from "vitest/node"

const DURATIONS = new URL("./test-durations.json", import.meta.url)

/** A file no run has recorded yet (a new one) is assumed slow, so it never starts last. */
const UNRECORDED_SECONDS = 1_000

const recordedSeconds = (): Readonly<Record<string, number>> => {
  try {
    return JSON.parse(fs.readFileSync(DURATIONS, "utf8")) as Record<string, number>
  } catch {
    return {}
  }
}

export class LongestFirst extends BaseSequencer {
  override async sort(files: Array<TestSpecification>): Promise<Array<TestSpecification>> {
    const recorded = recordedSeconds()
    const key = (spec: TestSpecification) => `${spec.project.name}:${path.relative(this.ctx.config.root, spec.moduleId)}`
    const seconds = (spec: TestSpecification) => recorded[key(spec)] ?? UNRECORDED_SECONDS
    return [...files].sort((a, b) => seconds(b) - seconds(a) || key(a).localeCompare(key(b)))
  }
}
