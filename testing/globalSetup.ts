/**
 * One real PostgreSQL server per test run: an embedded, throwaway cluster, or the server named
 * by TEST_DATABASE_URL. Each test file then creates its own fresh database on it
 * (testing/database.ts). Beside it, the OpenClaw gateway runtime is installed once (about a
 * minute on a fresh machine, then reused from its cache directory), so the real-gateway test
 * files never race to install it.
 *
 * Vitest calls this once for the root and once per workspace project, so the run's resources are
 * started by the first call and stopped by the last teardown (one PostgreSQL, one Kubernetes
 * directory). Every scratch directory of the run lives under one run directory, set as TMPDIR
 * before the test processes fork (they and the processes they start inherit it) and removed
 * after the run: a test that forgets its scratch, or a process still writing into it, leaks
 * nothing.
 */
import { removeOrphanGatewayUsers } from "@svc/core/drivers/compute"
import { scratchDir, startEmbeddedPostgres } from "@svc/core/embedded-postgres"
import * as fs from "node:fs"
import type { TestProject } from "vitest/node"
import { ensureTestRuntime } from "./gatewayRuntime.js"
import { prepareKubernetesBinaries } from "./kubernetes/binaries.js"
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

interface Run {
  readonly pgAdminUrl: string
  readonly k8sRunDir: string
  readonly stop: () => Promise<void>
}

/** Removes the run directory; a failure is reported, never failing a run whose tests passed. */
const removeRunDir = (dir: string) => {
  try {
    fs.rmSync(dir, { recursive: true, force: true, maxRetries: 5 })
  } catch (error) {
    console.warn(`could not remove the test run's scratch directory ${dir}: ${String(error)}`)
  }
}

const startRun = async (): Promise<Run> => {
  // 0711: the Agents' Unix users (when run as root) must traverse it to their directories.
  const runDir = scratchDir("svc-t-")
  process.env.TMPDIR = runDir
  const runtime = ensureTestRuntime()
  // The Kubernetes test files' shared cluster starts on first use (kubernetes/shared.ts).
  const k8sRunDir = scratchDir("svc-test-k8s-")
  const external = process.env.TEST_DATABASE_URL
  // Every project's test files share this one server, each file with its pools and, for some,
  // whole `svc start`s (API, worker, credential service): more than the default 100 connections.
  const pg = external
    ? undefined
    : await startEmbeddedPostgres({ dir: scratchDir("svc-test-pg-"), ephemeral: true, settings: { max_connections: "400" } })
  await runtime
  return {
    pgAdminUrl: external ?? pg!.adminUrl,
    k8sRunDir,
    stop: async () => {
      await stopSharedCluster(k8sRunDir)
      await pg?.stop()
      await removeTestGatewayUsers()
      removeRunDir(runDir)
    }
  }
}

/** The run, shared by every call in this process (the module may be loaded once per project). */
const shared = globalThis as { svcTestRun?: { run: Promise<Run>; users: number; kubernetes?: Promise<void> } }

/**
 * Whether the files this run selects from `project` include one that uses the shared Kubernetes
 * cluster. Vitest 3.2 keeps the command line's file filters on its instance, outside its public
 * types; without them every file counts, which only costs a binaries check.
 */
const usesKubernetes = async (project: TestProject): Promise<boolean> => {
  const filters: unknown = Reflect.get(project.vitest, "filenamePattern")
  const { testFiles } = await project.globTestFiles(Array.isArray(filters) ? filters.map(String) : undefined)
  return testFiles.some((file) => /testing\/kubernetes\/|kubernetesTestNode/.test(fs.readFileSync(file, "utf8")))
}

export default async function setup(project: TestProject) {
  const state = (shared.svcTestRun ??= { run: startRun(), users: 0 })
  state.users += 1
  const run = await state.run
  // The cluster's binaries before the first file forks (a fresh machine builds them once); the
  // cluster itself starts on first use (kubernetes/shared.ts).
  if (await usesKubernetes(project)) await (state.kubernetes ??= prepareKubernetesBinaries())
  project.provide("pgAdminUrl", run.pgAdminUrl)
  project.provide("k8sRunDir", run.k8sRunDir)
  return async () => {
    state.users -= 1
    if (state.users === 0) {
      shared.svcTestRun = undefined
      await run.stop()
    }
  }
}
