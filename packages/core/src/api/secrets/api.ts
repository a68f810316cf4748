/**
 * The Secrets HTTP contract (DESIGN §7). Every endpoint is authenticated; handlers authorize
 * the exact resource. No response carries a Secret's value.
 */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { idempotent } from "../idempotency.js"
import { ErrorWire } from "../../errors/index.js"
import { JsonBody } from "../middleware.js"
import { Envelope, ListEnvelope, NamespaceId, SecretId } from "../../schema/index.js"
import { Schema } from "effect"
import { Authentication } from "../middleware.js"
import { PageParams } from "../iam/schemas.js"
import { CreateSecret, Secret, UpdateSecret } from "./schemas.js"

const InNamespace = Schema.Struct({ namespaceId: NamespaceId })
const SecretPath = Schema.Struct({ namespaceId: NamespaceId, secretId: SecretId })

export const SecretList = Schema.Array(Secret)

export const SecretsApi = HttpApiGroup.make("secrets")
  .add(
    HttpApiEndpoint.post("create", "/namespaces/:namespaceId/secrets")
      .pipe(idempotent)
      .setPath(InNamespace)
      .setPayload(CreateSecret)
      .addSuccess(Envelope(Secret, "SecretResponse"), { status: 201 })
      .addError(ErrorWire.RESOURCE_CONFLICT)
      .middleware(JsonBody)
      .middleware(Authentication)
      .annotate(OpenApi.Summary, "Create a Secret; the value is write-only (needs secret:create on the Namespace)")
  )
  .add(
    HttpApiEndpoint.get("list", "/namespaces/:namespaceId/secrets")
      .setPath(InNamespace)
      .setUrlParams(PageParams)
      .addSuccess(ListEnvelope(SecretList, "SecretListResponse"))
      .middleware(Authentication)
      .annotate(OpenApi.Summary, "List a Namespace's Secrets (needs namespace:read; filtered by secret:read)")
  )
  .add(
    HttpApiEndpoint.get("get", "/namespaces/:namespaceId/secrets/:secretId")
      .setPath(SecretPath)
      .addSuccess(Envelope(Secret, "SecretResponse"))
      .middleware(Authentication)
      .annotate(OpenApi.Summary, "Read a Secret's metadata, never its value (needs secret:read)")
  )
  .add(
    HttpApiEndpoint.patch("update", "/namespaces/:namespaceId/secrets/:secretId")
      .setPath(SecretPath)
      .setPayload(UpdateSecret)
      .addSuccess(Envelope(Secret, "SecretResponse"))
      .middleware(JsonBody)
      .middleware(Authentication)
      .annotate(OpenApi.Summary, "Replace a Secret's value (needs secret:update)")
  )
  .add(
    HttpApiEndpoint.del("delete", "/namespaces/:namespaceId/secrets/:secretId")
      .setPath(SecretPath)
      .addSuccess(HttpApiSchema.NoContent)
      .addError(ErrorWire.RESOURCE_CONFLICT)
      .middleware(Authentication)
      .annotate(OpenApi.Summary, "Delete a Secret; 409 while something references it (needs secret:delete)")
  )
  .addError(ErrorWire.FORBIDDEN)
  .annotate(OpenApi.Title, "Secrets")
  .annotate(OpenApi.Description, "Write-only named values of a Namespace, sealed by the Secret Driver")
