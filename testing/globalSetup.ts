/**
 * One real PostgreSQL server per test run: an embedded, throwaway cluster, or the server named
 * by TEST_DATABASE_URL. Each test file then creates its own fresh database on it
 * (testing/database.ts). Beside it, the OpenClaw gateway runtime is installed once (about a
 * minute on a fresh machine, then reused from its cache directory), so the real-gateway test
 * files never race to install it.
 */
import { removeOrphanGatewayUsers } from "@svc/core/drivers/compute"
import { scratchDir, startEmbeddedPostgres } from "@svc/core/embedded-postgres"
import * as fs from "node:fs"
import type { TestProject } from "vitest/node"
import { ensureTestRuntime } from "./gatewayRuntime.js"
import { stopSharedCluster } from "./kubernetes/runDir.js"

declare module "vitest" {
  export interface ProvidedContext {
    pgAdminUrl: string
  }
}

/**
 * As root, every Agent gets a Unix user that only its deletion removes; test files remove their
 * data dirs without deleting every Agent, so the users they leave are removed after the run.
 */
const removeTestGatewayUsers = async () => {
  if (process.getuid?.() === 0) await removeOrphanGatewayUsers()
}

export default async function setup(project: TestProject) {
  const runtime = ensureTestRuntime()
  // The Kubernetes test files' shared cluster starts on first use (kubernetes/shared.ts).
  const k8sRunDir = scratchDir("svc-test-k8s-")
  project.provide("k8sRunDir", k8sRunDir)
  const external = process.env.TEST_DATABASE_URL
  if (external) {
    project.provide("pgAdminUrl", external)
    await runtime
    return async () => {
      await stopSharedCluster(k8sRunDir)
      await removeTestGatewayUsers()
    }
  }
  const dir = scratchDir("svc-test-pg-")
  const [pg] = await Promise.all([startEmbeddedPostgres({ dir, ephemeral: true }), runtime])
  project.provide("pgAdminUrl", pg.adminUrl)
  return async () => {
    await stopSharedCluster(k8sRunDir)
    await pg.stop()
    fs.rmSync(dir, { recursive: true, force: true })
    await removeTestGatewayUsers()
  }
}
