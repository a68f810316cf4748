/**
 * One real PostgreSQL server per test run: an embedded, throwaway cluster, or the server named
 * by TEST_DATABASE_URL. Each test file then creates its own fresh database on it
 * (testing/database.ts).
 */
import { scratchDir, startEmbeddedPostgres } from "@svc/core/embedded-postgres"
import * as fs from "node:fs"
import type { TestProject } from "vitest/node"

declare module "vitest" {
  export interface ProvidedContext {
    pgAdminUrl: string
  }
}

export default async function setup(project: TestProject) {
  const external = process.env.TEST_DATABASE_URL
  if (external) {
    project.provide("pgAdminUrl", external)
    return
  }
  const dir = scratchDir("svc-test-pg-")
  const pg = await startEmbeddedPostgres({ dir, ephemeral: true })
  project.provide("pgAdminUrl", pg.adminUrl)
  return async () => {
    await pg.stop()
    fs.rmSync(dir, { recursive: true, force: true })
  }
}
