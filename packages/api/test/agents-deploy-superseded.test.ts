/**
 * A deployment superseded while its gateway starts (SPEC 3: a stop, a later deployment or a
 * deletion wins over a revision that is not active yet). The deployment ends `failed` with
 * REVISION_SUPERSEDED and must not leave the gateway it started running: before, the gateway of a
 * first deployment stopped this way ran on until the next recovery sweep (a minute by default).
 */
import { describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { deployRevision } from "@svc/worker"
import { ComputeDriver, type GatewayRef } from "@svc/core/drivers/compute"
import { AgentId, RevisionId } from "@svc/core/schema"
import { Effect, Exit, Layer } from "effect"
import { unavailableCompute } from "../../../testing/drivers.js"
import { TestServer } from "../../../testing/server.js"
import { setUpDeployableAgent } from "./support/deployableAgent.js"
import { apiTestLayer, expectData, seedAdmin, seedNamespace, send } from "./support/iamServer.js"

type Call = (method: string, path: string, body?: unknown) => ReturnType<typeof send>

/** A Compute Driver whose start runs `during` (what happens while the gateway starts) and that records starts and stops. */
const recordingCompute = (during: Effect.Effect<void>) => {
  const calls: Array<string> = []
  const layer = Layer.effect(ComputeDriver, Effect.map(ComputeDriver, (driver) => ({
    ...driver,
    startGateway: (spec: GatewayRef) => Effect.zipRight(Effect.sync(() => calls.push(`start ${spec.revisionId}`)), during),
    stopGateway: (ref: GatewayRef) => Effect.sync(() => calls.push(`stop ${ref.revisionId}`))
  }))).pipe(Layer.provide(unavailableCompute))
  return { calls, layer }
}

const failureCode = (exit: Exit.Exit<unknown, { readonly code: string }>) =>
  Exit.isFailure(exit) && exit.cause._tag === "Fail" ? exit.cause.error.code : Exit.isSuccess(exit) ? "succeeded" : "defect"

describe("a deployment superseded while its gateway starts", () => {
  it.layer(apiTestLayer(), { timeout: 120_000 })((it) => {
    const setUp = (label: string) =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdmin(`deploy-superseded-${label}@example.com`)
        const ns = yield* seedNamespace(`deploy-superseded-${label}`)
        const call: Call = (method, path, body) => send(baseUrl, method, `/namespaces/${ns}/${path}`, admin.headers, body)
        const { agent } = yield* setUpDeployableAgent(ns, call)
        return { ns, call, agentId: AgentId.make(agent.id) }
      })

    it.effect("by a stop: the deployment fails REVISION_SUPERSEDED and stops the gateway it started", () =>
      Effect.gen(function* () {
        const { ns, call, agentId } = yield* setUp("stop")
        const revision = RevisionId.make(expectData(yield* call("POST", `agents/${agentId}/deploy`), 202).id)
        const stop = Effect.map(call("POST", `agents/${agentId}/stop`), (result) => expect(expectData(result, 202).desiredRuntimeState).toBe("stopped"))
        const compute = recordingCompute(stop)
        const exit = yield* Effect.exit(deployRevision({ namespaceId: ns, agentId, revisionId: revision }).pipe(Effect.provide(compute.layer)))
        expect(failureCode(exit)).toBe("REVISION_SUPERSEDED")
        expect(compute.calls).toEqual([`start ${revision}`, `stop ${revision}`])
        const agent = expectData(yield* call("GET", `agents/${agentId}`), 200)
        expect(agent.activeRevisionId).toBeUndefined()
      }))

    it.effect("by a later deployment: the first one's gateway is stopped (the later one starts its own)", () =>
      Effect.gen(function* () {
        const { ns, call, agentId } = yield* setUp("later")
        const first = RevisionId.make(expectData(yield* call("POST", `agents/${agentId}/deploy`), 202).id)
        let second = ""
        const redeploy = Effect.map(call("POST", `agents/${agentId}/deploy`), (result) => {
          second = expectData(result, 202).id as string
        })
        const compute = recordingCompute(redeploy)
        const exit = yield* Effect.exit(deployRevision({ namespaceId: ns, agentId, revisionId: first }).pipe(Effect.provide(compute.layer)))
        expect(failureCode(exit)).toBe("REVISION_SUPERSEDED")
        expect(compute.calls).toEqual([`start ${first}`, `stop ${first}`])
        expect(second).not.toBe("")
        expect(expectData(yield* call("GET", `agents/${agentId}`), 200).activeRevisionId).toBeUndefined()
      }))

    it.effect("a deployment still wanted when its gateway is up is activated, and nothing is stopped", () =>
      Effect.gen(function* () {
        const { ns, call, agentId } = yield* setUp("wanted")
        const sql = yield* SqlClient.SqlClient
        const revision = RevisionId.make(expectData(yield* call("POST", `agents/${agentId}/deploy`), 202).id)
        const compute = recordingCompute(Effect.void)
        yield* deployRevision({ namespaceId: ns, agentId, revisionId: revision }).pipe(Effect.provide(compute.layer))
        expect(compute.calls).toEqual([`start ${revision}`])
        const rows = yield* sql<{ active_revision_id: string | null }>`SELECT active_revision_id FROM agents WHERE id = ${agentId}`
        expect(rows[0]!.active_revision_id).toBe(revision)
      }))
  })
})
