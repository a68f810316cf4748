/**
 * The deployment status (SPEC 2.7) read from persisted state only: the revision's `agent.deploy`
 * work item in each state it can be in (set in SQL, as the worker would have left it), and the
 * runtime failure the worker notes on the revision. Covers `queued` (fresh and after a failed
 * attempt), `running` (a live lease), `failed` with `CONVERGENCE_DEADLINE_EXCEEDED` (`timeoutMs`
 * and `runtimeFailure`), other failures, and that terminal results never change afterwards.
 */
import { describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { RoleId } from "@svc/core/schema"
import { Effect } from "effect"
import { bindRole } from "../../../testing/identity.js"
import { TestServer } from "../../../testing/server.js"
import { apiTestLayer, expectData, type Headers, seedAdmin, seedNamespace, send, TIMESTAMP } from "./support/iamServer.js"

const CREATED = "2030-01-01T00:00:00.000Z"
const DEADLINE = "2030-01-02T00:00:00.000Z"
const DAY_MS = 24 * 60 * 60 * 1000
/** A moment in the past: a lease that ran out then. */
const LAPSED = "2020-01-01T00:00:00.000Z"

describe("deployment status", () => {
  it.layer(apiTestLayer(), { timeout: 120_000 })((it) => {
    const setup = (label: string) =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const sql = yield* SqlClient.SqlClient
        const admin = yield* seedAdmin(`deployment-status-${label}@example.com`)
        const ns = yield* seedNamespace(`deployment-status-${label}`)
        const call = (method: string, path: string, body?: unknown, headers: Headers = admin.headers) =>
          send(baseUrl, method, `/namespaces/${ns}/${path}`, headers, body)
        const secret = expectData(yield* call("POST", "secrets", { name: "model-key", value: "sk-status-key" }), 201)
        const configuration = expectData(yield* call("POST", "configurations", { kind: "agent", values: { agents: {} } }), 201)
        const agent = expectData(yield* call("POST", "agents", {
          name: "bot",
          configurationId: configuration.id,
          harnessAuth: { method: "api_key", source: { kind: "secret", namespaceId: ns, id: secret.id } }
        }), 201)
        const role = RoleId.make()
        yield* sql`INSERT INTO roles (id, namespace_id, name, permissions) VALUES (${role}, ${ns}, ${`operate-${role}`}, ARRAY['secret:operate'])`
        yield* bindRole(agent.servicePrincipalId, role, { kind: "secret", id: secret.id, namespaceId: ns })
        const deploy = () => Effect.map(call("POST", `agents/${agent.id}/deploy`), (r) => expectData(r, 202).id as string)
        const status = (revisionId: string) =>
          Effect.map(call("GET", `agents/${agent.id}/deployments/${revisionId}`), (r) => expectData(r, 200))
        const base = (revisionId: string) => ({ deploymentId: revisionId, namespaceId: ns, agentId: agent.id, warnings: [] })
        return { sql, call, agent, deploy, status, base }
      })

    it.effect("queued, queued after a failed attempt, running under a live lease", () =>
      Effect.gen(function* () {
        const { sql, deploy, status, base } = yield* setup("progress")
        const revision = yield* deploy()
        const queued = yield* status(revision)
        expect(queued).toEqual({
          ...base(revision),
          status: "queued",
          error: null,
          progress: { lastAttempt: null, nextAttemptAt: expect.stringMatching(TIMESTAMP) }
        })

        // A worker claimed it: running, no next attempt.
        yield* sql`
          UPDATE work_items SET state = 'running', lease_owner = 'worker-a', lease_expires_at = now() + interval '30 seconds',
            attempt_count = 1
          WHERE kind = 'agent.deploy' AND key = ${revision}
        `
        expect(yield* status(revision)).toEqual({
          ...base(revision),
          status: "running",
          error: null,
          progress: { lastAttempt: null, nextAttemptAt: null }
        })

        // The attempt failed transiently (the runtime is still installing): queued for a retry.
        yield* sql`
          UPDATE work_items SET state = 'queued', lease_owner = NULL, lease_expires_at = NULL,
            last_attempt_at = '2030-01-01T00:00:05Z', last_attempt_code = 'RUNTIME_NOT_INSTALLED',
            last_attempt_message = 'The local gateway runtime is not installed on this host.',
            next_attempt_at = '2030-01-01T00:00:07Z'
          WHERE kind = 'agent.deploy' AND key = ${revision}
        `
        expect(yield* status(revision)).toEqual({
          ...base(revision),
          status: "queued",
          error: null,
          progress: {
            lastAttempt: {
              at: "2030-01-01T00:00:05.000Z",
              code: "RUNTIME_NOT_INSTALLED",
              message: "The local gateway runtime is not installed on this host."
            },
            nextAttemptAt: "2030-01-01T00:00:07.000Z"
          }
        })

        // Taken again by a worker: running, the previous attempt still shown.
        yield* sql`
          UPDATE work_items SET state = 'running', lease_owner = 'worker-b', lease_expires_at = now() + interval '30 seconds',
            attempt_count = 2
          WHERE kind = 'agent.deploy' AND key = ${revision}
        `
        expect((yield* status(revision)).progress).toEqual({
          lastAttempt: {
            at: "2030-01-01T00:00:05.000Z",
            code: "RUNTIME_NOT_INSTALLED",
            message: "The local gateway runtime is not installed on this host."
          },
          nextAttemptAt: null
        })
      }))

    it.effect("SPEC 3: a claim whose lease expired is no live claim: queued, due since the lease lapsed", () =>
      Effect.gen(function* () {
        const { sql, deploy, status, base } = yield* setup("lease-expired")
        const revision = yield* deploy()
        // The worker holding it died: its lease ran out and no reaper has run yet.
        yield* sql`
          UPDATE work_items SET state = 'running', lease_owner = 'worker-gone', lease_expires_at = ${LAPSED}, attempt_count = 1
          WHERE kind = 'agent.deploy' AND key = ${revision}
        `
        expect(yield* status(revision)).toEqual({
          ...base(revision),
          status: "queued",
          error: null,
          progress: { lastAttempt: null, nextAttemptAt: LAPSED }
        })
        // The stored item is left as it is: the reaper, not a read, requeues it.
        const stored = yield* sql<{ state: string }>`SELECT state FROM work_items WHERE kind = 'agent.deploy' AND key = ${revision}`
        expect(stored).toEqual([{ state: "running" }])
      }))

    it.effect("a deadline passed: CONVERGENCE_DEADLINE_EXCEEDED with timeoutMs and the last runtime failure; never changes", () =>
      Effect.gen(function* () {
        const { sql, call, agent, deploy, status, base } = yield* setup("deadline")
        const revision = yield* deploy()
        // The worker noted the last failed check while retrying.
        yield* sql`
          UPDATE agent_revisions SET runtime_failure = ${
          JSON.stringify({ component: "gateway", check: "readiness", checkedAt: "2030-01-01T23:59:00.000Z", code: "GATEWAY_START_TIMEOUT" })
        }::jsonb
          WHERE id = ${revision}
        `
        yield* sql`
          UPDATE work_items SET state = 'failed', finished_at = ${DEADLINE}, created_at = ${CREATED}, deadline_at = ${DEADLINE},
            attempt_count = 9, last_attempt_at = ${DEADLINE}, last_attempt_code = 'DEADLINE_EXCEEDED',
            last_attempt_message = 'The work did not complete before its deadline.'
          WHERE kind = 'agent.deploy' AND key = ${revision}
        `
        const failed = yield* status(revision)
        expect(failed).toEqual({
          ...base(revision),
          status: "failed",
          error: {
            code: "CONVERGENCE_DEADLINE_EXCEEDED",
            message: "The deployment did not converge before its deadline.",
            data: {
              timeoutMs: DAY_MS,
              runtimeFailure: { component: "gateway", check: "readiness", checkedAt: "2030-01-01T23:59:00.000Z", code: "GATEWAY_START_TIMEOUT" }
            }
          },
          progress: null
        })

        // Later deployments, a stop, and a late note by a worker change nothing in it.
        const later = yield* deploy()
        yield* sql`
          UPDATE work_items SET state = 'succeeded', finished_at = now(), last_attempt_at = now(),
            last_attempt_code = 'SUCCEEDED', last_attempt_message = 'The attempt succeeded.'
          WHERE kind = 'agent.deploy' AND key = ${later}
        `
        yield* sql`UPDATE agents SET active_revision_id = ${later} WHERE id = ${agent.id}`
        const succeeded = yield* status(later)
        expect(succeeded).toEqual({ ...base(later), status: "succeeded", error: null, progress: null })
        expectData(yield* call("POST", `agents/${agent.id}/stop`), 202)
        yield* deploy()
        expect(yield* status(revision)).toEqual(failed)
        expect(yield* status(later)).toEqual(succeeded)
      }))

    it.effect("a deadline without a noted runtime failure carries timeoutMs only; a malformed note is left out", () =>
      Effect.gen(function* () {
        const { sql, deploy, status } = yield* setup("deadline-bare")
        const revision = yield* deploy()
        yield* sql`
          UPDATE work_items SET state = 'failed', finished_at = ${DEADLINE}, created_at = ${CREATED}, deadline_at = ${DEADLINE},
            last_attempt_at = ${DEADLINE}, last_attempt_code = 'DEADLINE_EXCEEDED',
            last_attempt_message = 'The work did not complete before its deadline.'
          WHERE kind = 'agent.deploy' AND key = ${revision}
        `
        const bare = { code: "CONVERGENCE_DEADLINE_EXCEEDED", message: "The deployment did not converge before its deadline.", data: { timeoutMs: DAY_MS } }
        expect((yield* status(revision)).error).toEqual(bare)
        yield* sql`
          UPDATE agent_revisions SET runtime_failure = ${JSON.stringify({ component: "gateway", check: "has spaces", checkedAt: "x", code: "E" })}::jsonb
          WHERE id = ${revision}
        `
        expect((yield* status(revision)).error).toEqual(bare)
      }))

    it.effect("another terminal failure keeps its own safe code and message", () =>
      Effect.gen(function* () {
        const { sql, deploy, status, base } = yield* setup("auth")
        const revision = yield* deploy()
        yield* sql`
          UPDATE work_items SET state = 'failed', finished_at = now(), attempt_count = 1, last_attempt_at = now(),
            last_attempt_code = 'RUNTIME_AUTHENTICATION_FAILED', last_attempt_message = 'The model provider rejected the Agent''s credential.'
          WHERE kind = 'agent.deploy' AND key = ${revision}
        `
        expect(yield* status(revision)).toEqual({
          ...base(revision),
          status: "failed",
          error: { code: "RUNTIME_AUTHENTICATION_FAILED", message: "The model provider rejected the Agent's credential." },
          progress: null
        })
      }))
  })
})
