/**
 * The set-up the worker's repository-session tests share: a repository world (loopback code host,
 * real credential service, database), a `local` data directory with Namespace A provisioned, the
 * codehost Repo Driver on the service's control socket, and a runner providing them.
 */
import { SqlClient } from "@effect/sql"
import { AgentRepositorySessionsRepo } from "@svc/core/db"
import { ComputeDriver, type ComputeDriverShape, layerLocal } from "@svc/core/drivers/compute"
import { makeCodehostRepoDriver, RepoDriver, type RepoDriverShape } from "@svc/core/drivers/repo"
import type { NamespaceId } from "@svc/core/schema"
import { Effect, Either, Layer } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, expect } from "vitest"
import { NS_A } from "../../../testing/credentialService.js"
import { pgClientLayer } from "../../../testing/database.js"
import { listenerStatus, type RepositoryWorld, startRepositoryWorld } from "../../../testing/repositoryWorld.js"

export type HarnessServices = SqlClient.SqlClient | ComputeDriver | RepoDriver | AgentRepositorySessionsRepo

export const namespaceId = NS_A as NamespaceId

/** Another Compute Driver than `local` over the data directory: built once the world runs, closed at the end. */
export interface HarnessCompute {
  readonly start: (world: RepositoryWorld) => Promise<ComputeDriverShape>
  readonly close: () => Promise<void>
}

/** Registers the file's beforeAll/afterAll; the getters are valid inside tests. */
export const repositoryHarness = (
  wrap: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R> = (e) => e,
  compute?: HarnessCompute
) => {
  let world: RepositoryWorld & { readonly databaseUrl: string }
  let dataDir = ""
  let driver: RepoDriverShape
  let computeDriver: ComputeDriverShape | undefined

  const layer = () =>
    Layer.mergeAll(computeDriver === undefined ? layerLocal(dataDir) : Layer.succeed(ComputeDriver, computeDriver), Layer.succeed(RepoDriver, driver), AgentRepositorySessionsRepo.Default).pipe(
      Layer.provideMerge(pgClientLayer(world.databaseUrl))
    )
  const run = <A, E>(effect: Effect.Effect<A, E, HarnessServices>) =>
    Effect.runPromise(Effect.either(wrap(effect)).pipe(Effect.provide(layer())))

  beforeAll(async () => {
    world = await startRepositoryWorld()
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "svc-repo-worker-"))
    computeDriver = await compute?.start(world)
    driver = makeCodehostRepoDriver({ id: "codehost", controlSocket: world.files.socketPath, sessionDurationSeconds: 900 }, world.registry)
    expect(await run(Effect.flatMap(ComputeDriver, (c) => c.provisionNamespace({ id: namespaceId })))).toEqual(Either.right(undefined))
  }, 20 * 60_000)

  afterAll(async () => {
    if (computeDriver !== undefined) await Effect.runPromise(Effect.either(computeDriver.teardownNamespace({ id: namespaceId })))
    await compute?.close()
    await world?.close()
    fs.rmSync(dataDir, { recursive: true, force: true })
  })

  return {
    world: () => world,
    dataDir: () => dataDir,
    driver: () => driver,
    run,
    /** The listener's answer to a bearer alone. */
    listener: (bearer: string) => listenerStatus(world.service().listenerUrl, bearer)
  }
}
