import { HttpApiBuilder } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { InstallationConfiguration } from "@svc/core/config"
import { WorkOutboxLive } from "@svc/worker"
import { Effect } from "effect"
import { ComputeDriver } from "@svc/core/drivers/compute"
import { SvcApi } from "@svc/core/api"
import { pageOf } from "../iam/access.js"
import { createAgent, deleteAgent, getAgent, listAgents, updateAgent } from "./agents.js"
import { deployAgent, getDeployment, getRevision, listRevisions, stopAgent } from "./deployments.js"
import { runDiagnostics } from "./diagnostics.js"
import { readWorkspaceFile, writeWorkspaceFile } from "./workspace.js"
import { getProvisioning, provisionAgent, retryProvisioning } from "./provisioning.js"

/**
 * The Agents group, wired. Needs an SqlClient, the Installation configuration and the
 * ComputeDriver main.ts selects (live workspace and diagnostics access).
 */
export const AgentsLive = HttpApiBuilder.group(SvcApi, "agents", (handlers) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const installation = yield* InstallationConfiguration
    const compute = yield* ComputeDriver
    const provide = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
      effect.pipe(
        Effect.provideService(SqlClient.SqlClient, sql),
        Effect.provideService(InstallationConfiguration, installation),
        Effect.provideService(ComputeDriver, compute),
        Effect.provide(WorkOutboxLive)
      )
    return handlers
      .handle("create", ({ path, payload }) => provide(createAgent(path.namespaceId, payload)))
      .handle("list", ({ path, urlParams }) => provide(listAgents(path.namespaceId, pageOf(urlParams))))
      .handle("get", ({ path }) => provide(getAgent(path.namespaceId, path.agentId)))
      .handle("update", ({ path, payload }) => provide(updateAgent(path.namespaceId, path.agentId, payload)))
      .handle("delete", ({ path }) => provide(deleteAgent(path.namespaceId, path.agentId)))
      .handle("deploy", ({ path }) => provide(deployAgent(path.namespaceId, path.agentId)))
      .handle("stop", ({ path }) => provide(stopAgent(path.namespaceId, path.agentId)))
      .handle("deployment", ({ path }) => provide(getDeployment(path.namespaceId, path.agentId, path.deploymentId)))
      .handle("revisions", ({ path, urlParams }) => provide(listRevisions(path.namespaceId, path.agentId, pageOf(urlParams))))
      .handle("revision", ({ path }) => provide(getRevision(path.namespaceId, path.agentId, path.revisionId)))
      .handle("diagnostics", ({ path }) => provide(runDiagnostics(path.namespaceId, path.agentId, path.deploymentId)))
      .handle("readWorkspaceFile", ({ path }) => provide(readWorkspaceFile(path.namespaceId, path.agentId, path.name)))
      .handle("writeWorkspaceFile", ({ path, payload }) =>
        provide(writeWorkspaceFile(path.namespaceId, path.agentId, path.name, payload.content)))
      .handle("provision", ({ path, payload }) => provide(Effect.map(provisionAgent(path.namespaceId, payload), (provisioning) => ({ provisioning }))))
      .handle("provisioning", ({ path }) => provide(getProvisioning(path.namespaceId, path.workId)))
      .handle("retryProvisioning", ({ path }) => provide(retryProvisioning(path.namespaceId, path.workId)))
  })
)
