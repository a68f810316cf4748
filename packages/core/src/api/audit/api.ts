/**
 * The audit API (DESIGN §18): an extension of SPEC 0.1.0, marked `x-svc-extension` in the
 * OpenAPI document. Keyset-paged reads of the audit trail, Installation-wide or one Namespace's.
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { ErrorWire } from "../../errors/index.js"
import { NamespaceId } from "../../schema/index.js"
import { Schema } from "effect"
import { Authentication } from "../middleware.js"
import { AuditPageResponse, AuditQuery } from "./schemas.js"

const extension = (operation: Record<string, unknown>): Record<string, unknown> => ({
  ...operation,
  "x-svc-extension": true
})

export const AuditApi = HttpApiGroup.make("audit")
  .add(
    HttpApiEndpoint.get("list", "/audit")
      .setUrlParams(AuditQuery)
      .addSuccess(AuditPageResponse)
      .annotate(OpenApi.Transform, extension)
      .annotate(
        OpenApi.Summary,
        "Extension of SPEC 0.1.0: page through the audit trail, oldest first (needs installation:administer)"
      )
  )
  .add(
    HttpApiEndpoint.get("listNamespace", "/namespaces/:namespaceId/audit")
      .setPath(Schema.Struct({ namespaceId: NamespaceId }))
      .setUrlParams(AuditQuery)
      .addSuccess(AuditPageResponse)
      .annotate(OpenApi.Transform, extension)
      .annotate(
        OpenApi.Summary,
        "Extension of SPEC 0.1.0: page through one Namespace's audit trail (needs namespace:read and namespace:administer, or installation:administer)"
      )
  )
  .middleware(Authentication)
  .addError(ErrorWire.FORBIDDEN)
  .annotate(OpenApi.Title, "Audit")
  .annotate(OpenApi.Description, "Extension of SPEC 0.1.0: the audit trail, read-only")
