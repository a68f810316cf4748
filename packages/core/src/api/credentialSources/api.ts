/**
 * The credential-sources HTTP contract (SPEC 4.6). Every endpoint is authenticated; handlers
 * authorize the exact resource. There is no update: register a new source and rebind.
 */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { ErrorWire } from "../../errors/index.js"
import { idempotent } from "../idempotency.js"
import { CredentialSourceId, Envelope, ListEnvelope, NamespaceId } from "../../schema/index.js"
import { PageParams } from "../iam/schemas.js"
import { Authentication, JsonBody } from "../middleware.js"
import { CreateCredentialSource, CredentialSource } from "./schemas.js"

const InNamespace = Schema.Struct({ namespaceId: NamespaceId })
const SourcePath = Schema.Struct({ namespaceId: NamespaceId, credentialSourceId: CredentialSourceId })

export const CredentialSourceList = Schema.Array(CredentialSource)

export const CredentialSourcesApi = HttpApiGroup.make("credentialSources")
  .add(
    HttpApiEndpoint.post("create", "/namespaces/:namespaceId/credential-sources")
      .pipe(idempotent)
      .setPath(InNamespace)
      .setPayload(CreateCredentialSource)
      .addSuccess(Envelope(CredentialSource, "CredentialSourceResponse"), { status: 201 })
      .addError(ErrorWire.RESOURCE_CONFLICT)
      .addError(ErrorWire.NAMESPACE_NOT_READY)
      .middleware(JsonBody)
      .middleware(Authentication)
      .annotate(
        OpenApi.Summary,
        "Register a credential source with the Credential Gateway (needs credential_source:create on the Namespace and secret:operate on each Secret)"
      )
  )
  .add(
    HttpApiEndpoint.get("list", "/namespaces/:namespaceId/credential-sources")
      .setPath(InNamespace)
      .setUrlParams(PageParams)
      .addSuccess(ListEnvelope(CredentialSourceList, "CredentialSourceListResponse"))
      .middleware(Authentication)
      .annotate(OpenApi.Summary, "List a Namespace's credential sources (filtered by exact read; no gateway call, no status)")
  )
  .add(
    HttpApiEndpoint.get("get", "/namespaces/:namespaceId/credential-sources/:credentialSourceId")
      .setPath(SourcePath)
      .addSuccess(Envelope(CredentialSource, "CredentialSourceResponse"))
      .middleware(Authentication)
      .annotate(OpenApi.Summary, "Read a credential source with its live status at the Credential Gateway (needs credential_source:read)")
  )
  .add(
    HttpApiEndpoint.del("delete", "/namespaces/:namespaceId/credential-sources/:credentialSourceId")
      .setPath(SourcePath)
      .addSuccess(HttpApiSchema.NoContent)
      .addError(ErrorWire.RESOURCE_CONFLICT)
      .middleware(Authentication)
      .annotate(OpenApi.Summary, "Delete a credential source from the gateway and here (needs credential_source:delete; 409 while an Agent binds it)")
  )
  .addError(ErrorWire.FORBIDDEN)
  .annotate(OpenApi.Title, "Credential sources")
  .annotate(OpenApi.Description, "Model credentials held by the Credential Gateway, which injects them on egress; Agents bind them by reference")
