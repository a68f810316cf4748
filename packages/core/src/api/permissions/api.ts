/**
 * Permission probes (an extension beyond SPEC, for the console: DESIGN §16 "what the caller may
 * not do is not offered"): which permissions the caller holds on one exact resource, so a client
 * hides what would be refused instead of guessing from role names. A probe reads policy only;
 * it changes nothing and audits nothing. It needs `read` on the resource it is about (the same
 * 403/404 as reading it), so it says nothing of resources the caller cannot see.
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { ErrorWire } from "../../errors/index.js"
import { isPermission } from "../../iam/permissions.js"
import { AgentId, Envelope, NamespaceId } from "../../schema/index.js"
import { Authentication } from "../middleware.js"

const HeldPermission = Schema.String.pipe(Schema.filter(isPermission))

export const CallerPermissions = Schema.Struct({
  /** The caller's permissions on the resource, sorted; those a Restriction removes are absent. */
  permissions: Schema.Array(HeldPermission)
}).annotations({ identifier: "CallerPermissions" })
export type CallerPermissions = typeof CallerPermissions.Type

const Response = Envelope(CallerPermissions, "CallerPermissionsResponse")

/** Marked in the OpenAPI document like every extension of SPEC 0.1.0 (DESIGN §18). */
const extension = (operation: Record<string, unknown>): Record<string, unknown> => ({ ...operation, "x-svc-extension": true })

export const PermissionsApi = HttpApiGroup.make("permissions")
  .add(
    HttpApiEndpoint.get("installation", "/permissions")
      .addSuccess(Response)
      .middleware(Authentication)
      .annotate(OpenApi.Transform, extension)
      .annotate(OpenApi.Summary, "Extension of SPEC 0.1.0: the caller's permissions on the Installation (any authenticated caller)")
  )
  .add(
    HttpApiEndpoint.get("namespace", "/namespaces/:namespaceId/permissions")
      .setPath(Schema.Struct({ namespaceId: NamespaceId }))
      .addSuccess(Response)
      .middleware(Authentication)
      .annotate(OpenApi.Transform, extension)
      .annotate(OpenApi.Summary, "Extension of SPEC 0.1.0: the caller's permissions on a Namespace (needs namespace:read)")
  )
  .add(
    HttpApiEndpoint.get("agent", "/namespaces/:namespaceId/agents/:agentId/permissions")
      .setPath(Schema.Struct({ namespaceId: NamespaceId, agentId: AgentId }))
      .addSuccess(Response)
      .middleware(Authentication)
      .annotate(OpenApi.Transform, extension)
      .annotate(OpenApi.Summary, "Extension of SPEC 0.1.0: the caller's permissions on an Agent (needs agent:read)")
  )
  .addError(ErrorWire.FORBIDDEN)
  .annotate(OpenApi.Title, "Permissions")
  .annotate(OpenApi.Description, "Extension of SPEC 0.1.0: permission probes for clients, what the caller may do with one resource")
