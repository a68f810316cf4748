/**
 * What the worker-crash tests (local and kubernetes) read to prove a deployment converged exactly
 * once: the deploy work item's row, the answer of a succeeded deployment, and the revision
 * activations in the audit trail; and the API they run in-process beside worker processes.
 */
import { SqlClient } from "@effect/sql"
import { ApiGroupsLive, AuthSettings, SvcApi } from "@svc/api"
import { type InstallationConfig, InstallationConfiguration } from "@svc/core/config"
import { Migrations } from "@svc/core/db"
import type { ComputeDriver } from "@svc/core/drivers/compute"
import { builtinSecretDriverLayer } from "@svc/core/drivers/secret"
import { httpPipeline } from "@svc/core/http"
import { Effect, Layer, Redacted } from "effect"
import { pgClientLayer } from "../../../../testing/database.js"
import { type Progressing, until as pollUntil, workItemProgress } from "../../../../testing/poll.js"
import type { SvcProcess } from "../../../../testing/process.js"
import { serveForTest } from "../../../../testing/server.js"
import { expect } from "vitest"
import { expectData, type Result } from "./iamServer.js"

export interface DeployItem {
  readonly state: string
  readonly lease_owner: string | null
  readonly attempt_count: number
  readonly last_attempt_code: string | null
}

export const deployItem = (revisionId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql<DeployItem>`
        SELECT state, lease_owner, attempt_count, last_attempt_code FROM work_items WHERE kind = 'agent.deploy' AND key = ${revisionId}
      `,
      (rows) => rows[0]!
    ))

/** `GET .../deployments/{id}` of a deployment that succeeded without warnings. */
export const succeededDeployment = (revisionId: string, namespaceId: string, agentId: string) => ({
  deploymentId: revisionId,
  namespaceId,
  agentId,
  status: "succeeded",
  error: null,
  progress: null,
  warnings: []
})

/** The revisions activated for the Agent, oldest first. */
export const activations = (agentId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ revision_id: string }>`
      SELECT details->>'revisionId' AS revision_id FROM audit_events
      WHERE kind = 'agent.revision-activated' AND resource_id = ${agentId} ORDER BY id
    `)

/**
 * The API alone in this process, on its own database and Secret key, for workers run as child
 * processes against the same database.
 */
export const apiOnlyLayer = (
  compute: Layer.Layer<ComputeDriver>,
  installation: InstallationConfig,
  secretKey: Uint8Array,
  databaseUrl: string
) =>
  serveForTest(httpPipeline(SvcApi, ApiGroupsLive, { development: true, maxBodyBytes: 448 * 1024 })).pipe(
    Layer.provide(compute),
    Layer.provide(Layer.succeed(AuthSettings, AuthSettings.from({ baseUrl: "http://127.0.0.1:8080", production: false }))),
    Layer.provide(Layer.succeed(InstallationConfiguration, installation)),
    Layer.provideMerge(builtinSecretDriverLayer({ current: Redacted.make(new Uint8Array(secretKey)) })),
    Layer.provideMerge(Layer.provideMerge(Layer.effectDiscard(Migrations.run), pgClientLayer(databaseUrl)))
  )

/** Polls until `done`; on failure the message names the wait and shows the workers' output. */
export const untilWithWorkers = (workers: ReadonlyArray<SvcProcess>) =>
<A, E, R, R2 = never>(read: Effect.Effect<A, E, R>, done: (a: A) => boolean, budget: number | Progressing<R2>, what: string) =>
  pollUntil(read, done, budget, () => `\n${what}\n${workers.map((w, i) => `--- worker ${i}\n${w.output().slice(-3000)}`).join("\n")}`)

/**
 * After worker A's SIGKILL: polls until the deployment ends, then asserts it converged exactly
 * once on another worker (succeeded, a second attempt, one activation, the revision active).
 */
export const expectConvergedOnce = <R>(
  call: (method: string, path: string) => Effect.Effect<Result, never, R>,
  until: ReturnType<typeof untilWithWorkers>,
  deploy: { readonly ns: string; readonly agentId: string; readonly revisionId: string }
) =>
  Effect.gen(function* () {
    const agentPath = `/namespaces/${deploy.ns}/agents/${deploy.agentId}`
    const done = expectData(
      yield* until(
        call("GET", `${agentPath}/deployments/${deploy.revisionId}`),
        (r) => r.body.data?.status === "succeeded" || r.body.data?.status === "failed",
        { progress: workItemProgress(deploy.revisionId) },
        "deployment done"
      ),
      200
    )
    expect(done).toEqual(succeededDeployment(deploy.revisionId, deploy.ns, deploy.agentId))
    const finished = yield* deployItem(deploy.revisionId)
    expect(finished).toMatchObject({ state: "succeeded", lease_owner: null, last_attempt_code: "SUCCEEDED" })
    expect(finished.attempt_count).toBeGreaterThanOrEqual(2)
    expect(yield* activations(deploy.agentId)).toEqual([{ revision_id: deploy.revisionId }])
    expect(expectData(yield* call("GET", agentPath), 200)).toMatchObject({ activeRevisionId: deploy.revisionId, desiredRuntimeState: "running" })
    return done
  })
