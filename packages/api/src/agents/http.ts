import { HttpApiBuilder } from "@effect/platform"
import { SvcApi } from "@svc/core/api"
import { Effect } from "effect"
import { DeploymentEvents } from "./deploymentEvents.js"
import { Deployments } from "./deployments.js"
import { Diagnostics } from "./diagnostics.js"
import { Provisioning } from "./provisioning.js"
import { Rollback } from "./rollback.js"
import { RepositoryOptions } from "./repositoryOptions.js"
import { Agents } from "./service.js"
import { Workspace } from "./workspace.js"

/** The Agents group: each handler calls a service, which authorizes the exact resource. */
export const AgentsLive = HttpApiBuilder.group(SvcApi, "agents", (handlers) =>
  Effect.gen(function* () {
    const agents = yield* Agents
    const deployments = yield* Deployments
    const diagnostics = yield* Diagnostics
    const workspace = yield* Workspace
    const provisioning = yield* Provisioning
    const rollback = yield* Rollback
    const events = yield* DeploymentEvents
    const repositoryOptions = yield* RepositoryOptions
    return handlers
      .handle("create", ({ path, payload }) => agents.create(path.namespaceId, payload))
      .handle("list", ({ path, urlParams }) => agents.list(path.namespaceId, urlParams))
      .handle("get", ({ path }) => agents.get(path.namespaceId, path.agentId))
      .handle("update", ({ path, payload }) => agents.update(path.namespaceId, path.agentId, payload))
      .handle("delete", ({ path }) => agents.delete(path.namespaceId, path.agentId))
      .handle("deploy", ({ path }) => deployments.deploy(path.namespaceId, path.agentId))
      .handle("stop", ({ path }) => deployments.stop(path.namespaceId, path.agentId))
      .handle("deployment", ({ path }) => deployments.deployment(path.namespaceId, path.agentId, path.deploymentId))
      .handle("deploymentEvents", ({ path }) => events.watch(path.namespaceId, path.agentId, path.deploymentId))
      .handle("redeploy", ({ path }) => rollback.redeploy(path.namespaceId, path.agentId, path.revisionId))
      .handle("revisions", ({ path, urlParams }) => deployments.revisions(path.namespaceId, path.agentId, urlParams))
      .handle("revision", ({ path }) => deployments.revision(path.namespaceId, path.agentId, path.revisionId))
      .handle("diagnostics", ({ path }) => diagnostics.run(path.namespaceId, path.agentId, path.deploymentId))
      .handle("readWorkspaceFile", ({ path }) => workspace.read(path.namespaceId, path.agentId, path.name))
      .handle("writeWorkspaceFile", ({ path, payload }) => workspace.write(path.namespaceId, path.agentId, path.name, payload.content))
      .handle("repositoryOptions", ({ path, urlParams }) => repositoryOptions.list(path.namespaceId, urlParams))
      .handle("provision", ({ path, payload }) => provisioning.provision(path.namespaceId, payload))
      .handle("provisioning", ({ path }) => provisioning.get(path.namespaceId, path.workId))
      .handle("retryProvisioning", ({ path }) => provisioning.retry(path.namespaceId, path.workId))
  })
)
