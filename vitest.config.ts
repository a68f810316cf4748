import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    globalSetup: [new URL("./testing/globalSetup.ts", import.meta.url).pathname],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Two cores: files run in parallel forks, each on its own database.
    pool: "forks",
    poolOptions: { forks: { maxForks: 2, minForks: 1 } }
  }
})
