/**
 * The Agents HTTP contract (SPEC 4.4). Every endpoint is authenticated; handlers authorize the
 * exact resource. Create and update queue no work; deploy, stop and delete do (202).
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { idempotent } from "../idempotency.js"
import { ErrorWire } from "../../errors/index.js"
import { JsonBody, WorkspaceWriteBody } from "../middleware.js"
import { AgentId, detailMessage, Envelope, ListEnvelope, LONE_SURROGATE, Limits, NamespaceId, OneOf, PatternString, RequestBody, RevisionId, Timestamp } from "../../schema/index.js"
import { Schema } from "effect"
import { Authentication } from "../middleware.js"
import { PageParams } from "../iam/schemas.js"
import { CreateAgent, UpdateAgent } from "./fields.js"
import { ProvisionAgent, ProvisioningAdmitted, ProvisioningWork } from "./provisionSchemas.js"
import { Agent, AgentRevision, DeploymentStatus } from "./schemas.js"
import { DeploymentEventStream, DeploymentStreamLimitWire } from "./events.js"
import { RepositoryOptionsQuery, RepositoryOptionsResponse } from "./repositoryOptions.js"

/** Marks an operation as beyond SPEC (DESIGN §18); its SPEC neighbours behave as SPEC says. */
const EXTENSION = { "x-svc-extension": true }

const InNamespace = Schema.Struct({ namespaceId: NamespaceId })
const AgentPath = Schema.Struct({ namespaceId: NamespaceId, agentId: AgentId })
const DeploymentPath = Schema.Struct({ namespaceId: NamespaceId, agentId: AgentId, deploymentId: RevisionId })
/**
 * SPEC 4: `{workId}` is 1-200 characters of `[A-Za-z0-9._~:@/-]`. Ours are `wrk_<uuidv4>`; another
 * id of that shape names no provisioning here (404, not 400).
 */
const WorkIdParameter = PatternString(/^[A-Za-z0-9._~:@/-]{1,200}$/, 200).annotations({ identifier: "WorkIdParameter" })
const ProvisioningPath = Schema.Struct({ namespaceId: NamespaceId, workId: WorkIdParameter })
const RevisionPath = Schema.Struct({ namespaceId: NamespaceId, agentId: AgentId, revisionId: RevisionId })

// TextEncoder, not Buffer: this contract is also run by the browser console (DESIGN §16).
const utf8ByteLength = (s: string) => new TextEncoder().encode(s).length

const WorkspaceFilePath = Schema.Struct({
  namespaceId: NamespaceId,
  agentId: AgentId,
  name: OneOf("AGENTS.md", "SOUL.md", "IDENTITY.md", "USER.md")
})

/** SPEC 4.4: well-formed Unicode, no NUL, at most 16 KiB of UTF-8. */
export const WriteWorkspaceFile = RequestBody({
  content: Schema.String.pipe(
    Schema.filter((s) => !s.includes("\u0000"), { message: detailMessage("INVALID_VALUE", "must not contain NUL") }),
    Schema.filter((s) => !LONE_SURROGATE.test(s), { message: detailMessage("INVALID_FORMAT", "must be well-formed Unicode") }),
    Schema.filter((s) => utf8ByteLength(s) <= Limits.workspaceFileContentBytes, {
      message: detailMessage("TOO_LONG", `must be at most ${Limits.workspaceFileContentBytes} bytes of UTF-8`)
    })
  )
}).annotations({ identifier: "WriteWorkspaceFileRequest" })

const DiagnosticsResult = Schema.Struct({
  revisionId: RevisionId,
  observedAt: Timestamp,
  checks: Schema.Array(Schema.Struct({
    component: Schema.String,
    check: Schema.String,
    state: Schema.Literal("succeeded", "failed", "unknown"),
    checkedAt: Schema.NullOr(Timestamp),
    code: Schema.optionalWith(Schema.String, { exact: true })
  }))
}).annotations({ identifier: "Diagnostics" })

const AgentResponse = Envelope(Agent, "AgentResponse")
const RevisionResponse = Envelope(AgentRevision, "AgentRevisionResponse")
const ProvisioningResponse = Envelope(ProvisioningWork, "AgentProvisioningResponse")

export const AgentsApi = HttpApiGroup.make("agents")
  .add(
    HttpApiEndpoint.post("create", "/namespaces/:namespaceId/agents")
      .pipe(idempotent)
      .setPath(InNamespace)
      .setPayload(CreateAgent)
      .addSuccess(AgentResponse, { status: 201 })
      .addError(ErrorWire.RESOURCE_CONFLICT)
      .addError(ErrorWire.NOT_IMPLEMENTED)
      .middleware(JsonBody)
      .middleware(Authentication)
      .annotate(OpenApi.Summary, "Create an Agent (needs agent:create, configuration:read and secret:operate on bound Secrets)")
  )
  .add(
    HttpApiEndpoint.get("list", "/namespaces/:namespaceId/agents")
      .setPath(InNamespace)
      .setUrlParams(PageParams)
      .addSuccess(ListEnvelope(Schema.Array(Agent), "AgentListResponse"))
      .middleware(Authentication)
      .annotate(OpenApi.Summary, "List the Agents the caller can read, page by page")
  )
  .add(
    HttpApiEndpoint.get("get", "/namespaces/:namespaceId/agents/:agentId")
      .setPath(AgentPath)
      .addSuccess(AgentResponse)
      .middleware(Authentication)
      .annotate(OpenApi.Summary, "Read an Agent (or its readable metadata with configurationReadError)")
  )
  .add(
    HttpApiEndpoint.patch("update", "/namespaces/:namespaceId/agents/:agentId")
      .setPath(AgentPath)
      .setPayload(UpdateAgent)
      .addSuccess(AgentResponse)
      .addError(ErrorWire.RESOURCE_CONFLICT)
      .addError(ErrorWire.AGENT_DELETING)
      .addError(ErrorWire.NOT_IMPLEMENTED)
      .middleware(JsonBody)
      .middleware(Authentication)
      .annotate(OpenApi.Summary, "Update an Agent's draft; applies on the next deployment (needs agent:update)")
  )
  .add(
    HttpApiEndpoint.del("delete", "/namespaces/:namespaceId/agents/:agentId")
      .setPath(AgentPath)
      .addSuccess(AgentResponse, { status: 202 })
      .addError(ErrorWire.RESOURCE_CONFLICT)
      .middleware(Authentication)
      .annotate(OpenApi.Summary, "Delete an Agent: 202 deleting, teardown queued (needs exact agent:delete)")
  )
  .add(
    HttpApiEndpoint.post("deploy", "/namespaces/:namespaceId/agents/:agentId/deploy")
      .pipe(idempotent)
      .setPath(AgentPath)
      .addSuccess(RevisionResponse, { status: 202 })
      .addError(ErrorWire.RESOURCE_CONFLICT)
      .addError(ErrorWire.AGENT_DELETING)
      .addError(ErrorWire.NAMESPACE_NOT_READY)
      .addError(ErrorWire.NOT_IMPLEMENTED)
      .middleware(Authentication)
      .annotate(OpenApi.Summary, "Deploy the saved draft as a new immutable revision (bodyless; 202 admitted, not ready)")
  )
  .add(
    HttpApiEndpoint.post("stop", "/namespaces/:namespaceId/agents/:agentId/stop")
      .pipe(idempotent)
      .setPath(AgentPath)
      .addSuccess(AgentResponse, { status: 202 })
      .addError(ErrorWire.AGENT_DELETING)
      .middleware(Authentication)
      .annotate(OpenApi.Summary, "Stop the Agent: desired state stopped; the worker removes execution (needs agent:operate)")
  )
  .add(
    HttpApiEndpoint.get("deployment", "/namespaces/:namespaceId/agents/:agentId/deployments/:deploymentId")
      .setPath(DeploymentPath)
      .addSuccess(Envelope(DeploymentStatus, "DeploymentStatusResponse"))
      .middleware(Authentication)
      .annotate(OpenApi.Summary, "A deployment's persisted status (needs agent_revision:read; no probes)")
  )
  .add(
    HttpApiEndpoint.get("deploymentEvents", "/namespaces/:namespaceId/agents/:agentId/deployments/:deploymentId/events")
      .setPath(DeploymentPath)
      .addSuccess(DeploymentEventStream)
      .addError(DeploymentStreamLimitWire)
      .middleware(Authentication)
      .annotate(OpenApi.Summary, "Extension: a deployment's status as Server-Sent Events until it is terminal (needs agent_revision:read)")
      .annotate(OpenApi.Override, EXTENSION)
  )
  .add(
    HttpApiEndpoint.post("redeploy", "/namespaces/:namespaceId/agents/:agentId/revisions/:revisionId/redeploy")
      .pipe(idempotent)
      .setPath(RevisionPath)
      .addSuccess(RevisionResponse, { status: 202 })
      .addError(ErrorWire.RESOURCE_CONFLICT)
      .addError(ErrorWire.AGENT_DELETING)
      .addError(ErrorWire.NAMESPACE_NOT_READY)
      .addError(ErrorWire.NOT_IMPLEMENTED)
      .middleware(Authentication)
      .annotate(
        OpenApi.Summary,
        "Extension: roll back by deploying a new revision from an earlier revision's snapshot (bodyless; 202; needs agent:deploy and agent_revision:read)"
      )
      .annotate(OpenApi.Override, EXTENSION)
  )
  .add(
    HttpApiEndpoint.get("revisions", "/namespaces/:namespaceId/agents/:agentId/revisions")
      .setPath(AgentPath)
      .setUrlParams(PageParams)
      .addSuccess(ListEnvelope(Schema.Array(AgentRevision), "AgentRevisionListResponse"))
      .middleware(Authentication)
      .annotate(OpenApi.Summary, "The Agent's revisions the caller can read (needs agent:read)")
  )
  .add(
    HttpApiEndpoint.get("revision", "/namespaces/:namespaceId/agents/:agentId/revisions/:revisionId")
      .setPath(RevisionPath)
      .addSuccess(RevisionResponse)
      .middleware(Authentication)
      .annotate(OpenApi.Summary, "One revision (needs agent_revision:read)")
  )
  .add(
    HttpApiEndpoint.post("diagnostics", "/namespaces/:namespaceId/agents/:agentId/deployments/:deploymentId/diagnostics")
      .setPath(DeploymentPath)
      .addSuccess(Envelope(DiagnosticsResult, "DiagnosticsResponse"))
      .addError(ErrorWire.RESOURCE_CONFLICT)
      .addError(ErrorWire.DEPENDENCY_UNAVAILABLE)
      .middleware(Authentication)
      .annotate(OpenApi.Summary, "Live checks of the active revision's gateway, never stored (needs agent:read, agent:operate, agent_revision:read)")
  )
  .add(
    HttpApiEndpoint.get("readWorkspaceFile", "/namespaces/:namespaceId/agents/:agentId/workspace/files/:name")
      .setPath(WorkspaceFilePath)
      .addSuccess(Envelope(Schema.Struct({ name: Schema.String, content: Schema.String }), "WorkspaceFileResponse"))
      .addError(ErrorWire.DEPENDENCY_UNAVAILABLE)
      .middleware(Authentication)
      .annotate(OpenApi.Summary, "Read one of the Agent's workspace files (needs agent:read)")
  )
  .add(
    HttpApiEndpoint.put("writeWorkspaceFile", "/namespaces/:namespaceId/agents/:agentId/workspace/files/:name")
      .setPath(WorkspaceFilePath)
      .setPayload(WriteWorkspaceFile)
      .addSuccess(Envelope(Schema.Struct({ name: Schema.String, size: Schema.Number }), "WorkspaceFileWritten"))
      .addError(ErrorWire.RESOURCE_CONFLICT)
      .addError(ErrorWire.AGENT_DELETING)
      .addError(ErrorWire.DEPENDENCY_UNAVAILABLE)
      .addError(ErrorWire.UNKNOWN_OUTCOME)
      .middleware(WorkspaceWriteBody)
      .middleware(Authentication)
      .annotate(OpenApi.Summary, "Replace one of the Agent's workspace files; body at most 48 KiB (needs agent:operate)")
  )
  .add(
    HttpApiEndpoint.post("provision", "/namespaces/:namespaceId/agents/provision")
      .pipe(idempotent)
      .setPath(InNamespace)
      .setPayload(ProvisionAgent)
      .addSuccess(Envelope(ProvisioningAdmitted, "AgentProvisioningAdmittedResponse"), { status: 202 })
      .addError(ErrorWire.RESOURCE_CONFLICT)
      .addError(ErrorWire.NAMESPACE_NOT_READY)
      .addError(ErrorWire.NOT_IMPLEMENTED)
      .middleware(JsonBody)
      .middleware(Authentication)
      .annotate(
        OpenApi.Summary,
        "Provision an Agent and its Configuration (inline or from a Preset); idempotent per requestId (needs agent:create and configuration:create)"
      )
  )
  .add(
    HttpApiEndpoint.get("repositoryOptions", "/namespaces/:namespaceId/agents/repository-options")
      .setPath(InNamespace)
      .setUrlParams(RepositoryOptionsQuery)
      .addSuccess(RepositoryOptionsResponse)
      .addError(ErrorWire.RESOURCE_CONFLICT)
      .addError(ErrorWire.REPOSITORY_OPTIONS_UNAVAILABLE)
      .middleware(Authentication)
      .annotate(
        OpenApi.Summary,
        "The repositories Agents of this Namespace may bind, with descriptions for descriptionRefs (needs agent:create)"
      )
  )
  .add(
    HttpApiEndpoint.get("provisioning", "/namespaces/:namespaceId/agents/provision/:workId")
      .setPath(ProvisioningPath)
      .addSuccess(ProvisioningResponse)
      .middleware(Authentication)
      .annotate(OpenApi.Summary, "A provisioning work item (needs provisioning:read; only its initiator until the Agent exists)")
  )
  .add(
    HttpApiEndpoint.post("retryProvisioning", "/namespaces/:namespaceId/agents/provision/:workId/retry")
      .setPath(ProvisioningPath)
      .addSuccess(ProvisioningResponse, { status: 202 })
      .addError(ErrorWire.RESOURCE_CONFLICT)
      .middleware(Authentication)
      .annotate(OpenApi.Summary, "Retry a failed provisioning from the phase that failed (needs provisioning:operate)")
  )
  .addError(ErrorWire.FORBIDDEN)
  .annotate(OpenApi.Title, "Agents")
  .annotate(OpenApi.Description, "Named AI workloads of a Namespace, their immutable revisions and deployments")
