import { describe, expect, it } from "@effect/vitest"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

const fixture = path.join(import.meta.dirname, "fixtures", "consumer")
const tsc = path.resolve(import.meta.dirname, "../../../node_modules/typescript/bin/tsc")

describe("@svc/core as a dependency", () => {
  it("type-checks and runs a consumer that imports the built subpath exports", () => {
    const out = fs.mkdtempSync(path.join(os.tmpdir(), "svc-consumer-"))
    const config = path.join(fixture, "tsconfig.json")
    const temp = path.join(fixture, `tsconfig.${path.basename(out)}.json`)
    fs.writeFileSync(temp, fs.readFileSync(config, "utf8").replace("OUT_DIR", out))
    try {
      execFileSync(process.execPath, [tsc, "-p", temp], { stdio: "pipe" })
      // Run the emitted JS from inside the fixture, so `@svc/core` resolves as for a consumer.
      const emitted = path.join(fixture, `run-${path.basename(out)}.mjs`)
      fs.copyFileSync(path.join(out, "index.js"), emitted)
      try {
        const printed = JSON.parse(execFileSync(process.execPath, [emitted], { encoding: "utf8" }))
        expect(printed).toEqual({
          ns: true,
          agent: true,
          at: "1970-01-01T00:00:00.000Z",
          status: 404,
          tag: "NotFound",
          limit: 458752,
          wire: "function",
          envelope: "function"
        })
      } finally {
        fs.rmSync(emitted, { force: true })
      }
    } finally {
      fs.rmSync(temp, { force: true })
      fs.rmSync(out, { recursive: true, force: true })
    }
  })
})
