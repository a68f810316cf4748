import { defineConfig } from "vitest/config"
import { LongestFirst } from "./testing/sequencer.js"

export default defineConfig({
  test: {
    globalSetup: [new URL("./testing/globalSetup.ts", import.meta.url).pathname],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Two cores: files run in parallel forks, each on its own database.
    pool: "forks",
    poolOptions: { forks: { maxForks: 2, minForks: 1 } },
    // The slowest files start first, by the durations a full run recorded (testing/sequencer.ts).
    sequence: { sequencer: LongestFirst },
    // The packages' built JavaScript is loaded by Node, not by Vitest's module runner, which
    // would run every module of it again in each file's fork (about 40% of a file's import time).
    server: { deps: { external: [/\/packages\/[^/]+\/dist\//] } }
  }
})
