/**
 * The `agent.provision` reconciler on its own (SPEC 2.13, 3): each phase commits what it creates
 * with the id that proves it, so a crash between phases (here: one step, then the handler from
 * the start) and a duplicate delivery resume without creating anything twice; a name taken
 * before transport and a closed Namespace fail permanently with fixed safe messages.
 */
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { CredentialSourceId, NamespaceId, RequestId, ServiceAccountId, WorkId } from "@svc/core/schema"
import type { AgentProvisionRequest } from "@svc/core/tenancy"
import { Effect, Exit } from "effect"
import { provisionAgent, provisionStep, WorkFailure } from "../src/index.js"
import { TestDatabase } from "./harness.js"

const request = (name: string, harnessAuth: object = { method: "runtime" }): AgentProvisionRequest => ({
  configuration: { values: { agents: {} }, secretBindings: {} },
  agent: {
    name,
    executionMode: "embedded",
    backendId: null,
    settings: { harnessAuth },
    workspaceDefaultsId: null,
    initialWorkspaceFiles: { "USER.md": "hi" },
    harnessSecretId: null
  }
})

/** A Namespace and an admitted record in it, as the API leaves them. */
const admitted = (name: string, harnessAuth?: object) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const namespaceId = NamespaceId.make()
    const workId = WorkId.make()
    yield* sql`INSERT INTO namespaces (id, name, status) VALUES (${namespaceId}, ${`ns-${workId}`}, 'ready')`
    yield* sql`
      INSERT INTO agent_provisioning (id, namespace_id, request_id, body_digest, initiator_principal_id, request)
      VALUES (${workId}, ${namespaceId}, ${RequestId.make()}, ${"a".repeat(64)}, 'prn_initiator', ${JSON.stringify(request(name, harnessAuth))}::jsonb)
    `
    return { namespaceId, workId }
  })

const state = (namespaceId: string, workId: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ phase: string; agent_id: string | null; configuration_id: string | null; done: boolean; kept: boolean }>`
      SELECT phase, agent_id, configuration_id, completed_at IS NOT NULL AS done, request IS NOT NULL AS kept
      FROM agent_provisioning WHERE id = ${workId}
    `
    const counts = yield* sql<{ agents: number; configurations: number; principals: number; files: number }>`
      SELECT (SELECT count(*)::int FROM agents WHERE namespace_id = ${namespaceId}) AS agents,
        (SELECT count(*)::int FROM configurations WHERE namespace_id = ${namespaceId}) AS configurations,
        (SELECT count(*)::int FROM principals WHERE namespace_id = ${namespaceId} AND kind = 'agent') AS principals,
        (SELECT count(*)::int FROM agent_initial_files f JOIN agents a ON a.id = f.agent_id WHERE a.namespace_id = ${namespaceId}) AS files
    `
    return { ...rows[0]!, ...counts[0]! }
  })

const failureOf = <A, R>(effect: Effect.Effect<A, WorkFailure, R>) =>
  Effect.map(Effect.exit(effect), (exit) => {
    if (Exit.isSuccess(exit)) throw new Error("expected a failure")
    const failure = exit.cause._tag === "Fail" ? exit.cause.error : undefined
    expect(failure).toBeInstanceOf(WorkFailure)
    // Not permanent (absent) means retried.
    return { code: failure!.code, message: failure!.message, permanent: failure!.permanent ?? false }
  })

layer(TestDatabase, { timeout: 60_000 })("agent.provision", (it) => {
  it.effect("a crash after the configuration phase resumes at transport; a duplicate delivery creates nothing", () =>
    Effect.gen(function* () {
      const { namespaceId, workId } = yield* admitted("Resumed")
      expect(yield* provisionStep(workId)).toBe("continue")
      const midway = yield* state(namespaceId, workId)
      expect(midway).toMatchObject({ phase: "transport", agent_id: null, configuration_id: expect.any(String), agents: 0, configurations: 1 })
      // The worker died here; the next claim runs the handler from the start, and so does a duplicate.
      yield* provisionAgent({ namespaceId, workId })
      yield* provisionAgent({ namespaceId, workId })
      const after = yield* state(namespaceId, workId)
      expect(after).toEqual({
        phase: "handoff",
        agent_id: expect.any(String),
        configuration_id: midway.configuration_id,
        done: true,
        kept: false,
        agents: 1,
        configurations: 1,
        principals: 1,
        files: 1
      })
      const sql = yield* SqlClient.SqlClient
      const agent = yield* sql<{ configuration_id: string; desired_runtime_state: string }>`
        SELECT configuration_id, desired_runtime_state FROM agents WHERE id = ${after.agent_id}
      `
      expect(agent).toEqual([{ configuration_id: midway.configuration_id, desired_runtime_state: "stopped" }])
      const audit = yield* sql<{ kind: string; actor_principal_id: string }>`
        SELECT kind, actor_principal_id FROM audit_events WHERE namespace_id = ${namespaceId} ORDER BY id
      `
      expect(audit).toEqual([
        { kind: "configuration.created", actor_principal_id: "prn_initiator" },
        { kind: "agent.created", actor_principal_id: "prn_initiator" },
        { kind: "agent.provisioned", actor_principal_id: "prn_initiator" }
      ])
    }))

  it.effect("a name taken before transport fails permanently there and writes no Agent; a closed Namespace fails permanently", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const first = yield* admitted("Twin")
      yield* provisionAgent(first)
      const second = yield* admitted("Twin")
      yield* sql`UPDATE agent_provisioning SET namespace_id = ${first.namespaceId} WHERE id = ${second.workId}`
      expect(yield* failureOf(provisionAgent({ namespaceId: first.namespaceId, workId: second.workId }))).toEqual({
        code: "RESOURCE_CONFLICT",
        message: "An Agent with this name already exists in the Namespace.",
        permanent: true
      })
      expect(yield* state(first.namespaceId, second.workId)).toMatchObject({ phase: "transport", agent_id: null, agents: 1, configurations: 2 })

      const closed = yield* admitted("Closed")
      yield* sql`UPDATE namespaces SET status = 'deleting' WHERE id = ${closed.namespaceId}`
      expect(yield* failureOf(provisionAgent(closed))).toEqual({
        code: "RESOURCE_CONFLICT",
        message: "The Namespace can no longer accept new Agents.",
        permanent: true
      })
      expect(yield* state(closed.namespaceId, closed.workId)).toMatchObject({ phase: "configuration", configurations: 0 })
    }))

  // SPEC 3 "a registering or deleting source cannot be bound", 4.5/4.6 DELETE refused while referenced:
  // the bound credential is locked when the Agent is written, so it cannot have gone in between.
  it.effect("a credential source or service account that went or is going since admission fails transport permanently", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const sourceId = CredentialSourceId.make()
      const accountId = ServiceAccountId.make()
      const source = { method: "credential_source", sourceId }
      const account = { method: "provider_service_account", serviceAccountId: accountId }
      const cases = [
        [source, "NOT_FOUND", "The credential source the request binds no longer exists in the Namespace."],
        [account, "NOT_FOUND", "The service account the request binds no longer exists in the Namespace."],
        [source, "RESOURCE_CONFLICT", "The credential source the request binds is deleting."],
        [account, "RESOURCE_CONFLICT", "The service account the request binds is deleting."]
      ] as const
      for (const [harnessAuth, code, message] of cases) {
        const record = yield* admitted(`Bound-${code}`, harnessAuth)
        if (code === "RESOURCE_CONFLICT") {
          yield* sql`INSERT INTO credential_sources (id, namespace_id, name, type, state) VALUES (${sourceId}, ${record.namespaceId}, 's', 'modelvendor', 'deleting')`
            .pipe(Effect.when(() => harnessAuth === source))
          yield* sql`INSERT INTO service_accounts (id, namespace_id, name, backend_id, upstream_name, state) VALUES (${accountId}, ${record.namespaceId}, 'a', 'accounts-main', ${`a-${accountId}`}, 'deleting')`
            .pipe(Effect.when(() => harnessAuth === account))
        }
        expect(yield* failureOf(provisionAgent(record))).toEqual({ code, message, permanent: true })
        expect(yield* state(record.namespaceId, record.workId)).toMatchObject({ phase: "transport", agent_id: null, agents: 0 })
        yield* sql`DELETE FROM credential_sources WHERE namespace_id = ${record.namespaceId}`
        yield* sql`DELETE FROM service_accounts WHERE namespace_id = ${record.namespaceId}`
      }

      const ready = yield* admitted("Bound-ready", source)
      yield* sql`INSERT INTO credential_sources (id, namespace_id, name, type, state) VALUES (${sourceId}, ${ready.namespaceId}, 's', 'modelvendor', 'ready')`
      yield* provisionAgent(ready)
      expect(yield* state(ready.namespaceId, ready.workId)).toMatchObject({ done: true, agents: 1 })
    }))

  // The lock is the repositories' (as admission's); a database failure there stays retryable.
  it.effect("a database failure while locking the bound credential is a retryable failure; the retry provisions", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const bound = [
        { table: "credential_sources", harnessAuth: { method: "credential_source", sourceId: CredentialSourceId.make() } },
        { table: "service_accounts", harnessAuth: { method: "provider_service_account", serviceAccountId: ServiceAccountId.make() } }
      ]
      for (const { table, harnessAuth } of bound) {
        const record = yield* admitted(`Bound-fault-${table}`, harnessAuth)
        if ("sourceId" in harnessAuth) {
          yield* sql`INSERT INTO credential_sources (id, namespace_id, name, type, state) VALUES (${harnessAuth.sourceId}, ${record.namespaceId}, 's', 'modelvendor', 'ready')`
        } else {
          yield* sql`INSERT INTO service_accounts (id, namespace_id, name, backend_id, upstream_name, state) VALUES (${harnessAuth.serviceAccountId}, ${record.namespaceId}, 'a', 'accounts-main', ${`a-${harnessAuth.serviceAccountId}`}, 'ready')`
        }
        // A real statement error (42703) on the lock's table only, until the column is back.
        yield* sql.unsafe(`ALTER TABLE ${table} RENAME COLUMN state TO state_hidden`)
        const failed = yield* failureOf(provisionAgent(record)).pipe(
          Effect.ensuring(Effect.orDie(sql.unsafe(`ALTER TABLE ${table} RENAME COLUMN state_hidden TO state`)))
        )
        expect(failed).toEqual({ code: "DEPENDENCY_UNAVAILABLE", message: "The database was unavailable; the work will be retried.", permanent: false })
        expect(yield* state(record.namespaceId, record.workId)).toMatchObject({ phase: "transport", agent_id: null, agents: 0 })
        yield* provisionAgent(record)
        expect(yield* state(record.namespaceId, record.workId)).toMatchObject({ done: true, agents: 1 })
      }
    }))
})
