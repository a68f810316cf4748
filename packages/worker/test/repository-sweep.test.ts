/**
 * The rules the worker applies to an Agent's repository sessions against real Agent and work
 * item rows (docs/decisions/repository-credentials.md, "Worker"): retiring spares the latest
 * revision of an Agent desired running (a deployment in flight); the sweep retires sessions of
 * revisions that are neither running nor being deployed, and expired ones, and queues
 * `agent.recover` for a running revision whose session nears its deadline or whose admission was
 * left unfinished (renewal).
 */
import { SqlClient } from "@effect/sql"
import { type ComputeDriver, layerLocal } from "@svc/core/drivers/compute"
import type { NamespaceId } from "@svc/core/schema"
import { makeCodehostRepoDriver, RepoDriver } from "@svc/core/drivers/repo"
import { enqueue } from "@svc/core/work"
import { Effect, Layer } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { frozenGrant, NS_A } from "../../../testing/credentialService.js"
import { pgClientLayer } from "../../../testing/database.js"
import { createAgentRow } from "../../../testing/identity.js"
import { type RepositoryWorld, startRepositoryWorld } from "../../../testing/repositoryWorld.js"
import { retireAgentSessions, sweepRepositorySessions } from "../src/index.js"

let world: RepositoryWorld & { readonly databaseUrl: string }
let dataDir = ""

beforeAll(async () => {
  world = await startRepositoryWorld()
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "svc-repo-sweep-"))
}, 120_000)

afterAll(async () => {
  await world?.close()
  fs.rmSync(dataDir, { recursive: true, force: true })
})

const run = <A, E>(effect: Effect.Effect<A, E, SqlClient.SqlClient | RepoDriver | ComputeDriver>) =>
  Effect.runPromise(effect.pipe(
    Effect.provide(Layer.mergeAll(
      layerLocal(dataDir),
      Layer.succeed(RepoDriver, makeCodehostRepoDriver({ id: "codehost", controlSocket: world.files.socketPath, sessionDurationSeconds: 900 }, world.registry))
    )),
    Effect.provide(pgClientLayer(world.databaseUrl))
  ))

describe("repository session rules over Agents and deployments", () => {
  it("retirement spares a deployment in flight; the sweep retires the rest and queues renewals", async () => {
    const ids = await run(Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      yield* sql`INSERT INTO namespaces (id, name, status) VALUES (${NS_A}, 'sweep', 'ready')`
      const agent = yield* createAgentRow(NS_A)
      const revision = (name: string, age: string) =>
        Effect.gen(function* () {
          const id = `rev_${crypto.randomUUID()}`
          yield* sql`INSERT INTO agent_revisions (id, agent_id, namespace_id, configuration_id, configuration_generation, snapshot, created_at)
            VALUES (${id}, ${agent.id}, ${NS_A}, ${agent.configurationId}, 1, '{}'::jsonb, now() - ${age}::interval)`
          return [name, id] as const
        })
      const revisions = Object.fromEntries([
        yield* revision("retired", "3 minutes"),
        yield* revision("running", "2 minutes"),
        yield* revision("deploying", "1 minute")
      ])
      yield* sql`UPDATE agents SET active_revision_id = ${revisions.running!}, desired_runtime_state = 'running' WHERE id = ${agent.id}`
      yield* enqueue({ kind: "agent.deploy", key: revisions.deploying!, payload: {} })
      const grant = frozenGrant(world.registry, NS_A, "widgets", "git-write")
      for (const [name, id] of Object.entries(revisions)) {
        yield* sql`INSERT INTO agent_repository_sessions
          (admission_id, namespace_id, agent_id, revision_id, grant_index, grant_body, session_id, state, deadline, state_changed_at)
          VALUES (${`${Date.now()}-${crypto.randomUUID()}`}, ${NS_A}, ${agent.id}, ${id}, 0, ${JSON.stringify(grant)}::jsonb,
            ${`rs_${crypto.randomUUID()}`}, 'open',
            now() + ${name === "running" ? "30 seconds" : "1 hour"}::interval, now() - interval '1 hour')`
      }
      // Another running Agent whose renewal was cut short: an admission left `opening`.
      const other = yield* createAgentRow(NS_A)
      const otherRevision = `rev_${crypto.randomUUID()}`
      yield* sql`INSERT INTO agent_revisions (id, agent_id, namespace_id, configuration_id, configuration_generation, snapshot)
        VALUES (${otherRevision}, ${other.id}, ${NS_A}, ${other.configurationId}, 1, '{}'::jsonb)`
      yield* sql`UPDATE agents SET active_revision_id = ${otherRevision}, desired_runtime_state = 'running' WHERE id = ${other.id}`
      yield* sql`INSERT INTO agent_repository_sessions (admission_id, namespace_id, agent_id, revision_id, grant_index, grant_body, state)
        VALUES (${`${Date.now()}-${crypto.randomUUID()}`}, ${NS_A}, ${other.id}, ${otherRevision}, 0, ${JSON.stringify(grant)}::jsonb, 'opening')`
      return { agentId: agent.id, otherAgentId: other.id, revisions }
    }))
    const states = () => run(Effect.flatMap(SqlClient.SqlClient, (sql) =>
      sql<{ revision_id: string; state: string }>`
        SELECT revision_id, state FROM agent_repository_sessions WHERE agent_id = ${ids.agentId} ORDER BY created_at, revision_id`))
    const stateOf = async () => Object.fromEntries((await states()).map((row) => [
      Object.entries(ids.revisions).find(([, id]) => id === row.revision_id)![0], row.state
    ]))

    // Redeploy of `running` finished: every other revision's sessions go, but not the one being deployed.
    await run(retireAgentSessions({ namespaceId: NS_A as NamespaceId, agentId: ids.agentId }, ids.revisions.running!))
    expect(await stateOf()).toEqual({ retired: "closing", running: "open", deploying: "open" })

    // The deployment of `deploying` ended (failed): the sweep retires its session; `running` is renewed.
    await run(Effect.flatMap(SqlClient.SqlClient, (sql) =>
      sql`UPDATE work_items SET state = 'failed', finished_at = now() WHERE kind = 'agent.deploy'`))
    await run(sweepRepositorySessions)
    expect(await stateOf()).toEqual({ retired: "closing", running: "open", deploying: "closing" })
    const items = await run(Effect.flatMap(SqlClient.SqlClient, (sql) =>
      sql<{ kind: string; key: string }>`SELECT kind, key FROM work_items WHERE state = 'queued' ORDER BY kind, key`))
    expect(items.filter((item) => item.kind === "agent.recover")).toEqual(
      [ids.agentId, ids.otherAgentId].sort().map((key) => ({ kind: "agent.recover", key })))
    expect(items.filter((item) => item.kind === "repository.cleanup")).toHaveLength(2)

    // Stopped: nothing is spared.
    await run(Effect.flatMap(SqlClient.SqlClient, (sql) => sql`UPDATE agents SET desired_runtime_state = 'stopped' WHERE id = ${ids.agentId}`))
    await run(retireAgentSessions({ namespaceId: NS_A as NamespaceId, agentId: ids.agentId }, null))
    expect(await stateOf()).toEqual({ retired: "closing", running: "closing", deploying: "closing" })
  })
})
