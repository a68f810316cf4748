import { defineWorkspace } from "vitest/config"

// One project per package; the PostgreSQL server is started once per run by the root config.
export default defineWorkspace(
  ["core", "worker", "api", "credential-service", "cli"].map((name) => ({
    extends: "./vitest.config.ts",
    test: {
      name,
      root: `packages/${name}`,
      include: ["test/**/*.test.ts"]
    }
  }))
)
