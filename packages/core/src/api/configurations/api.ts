/**
 * The Configurations HTTP contract (SPEC 4.3). Every endpoint is authenticated; handlers
 * authorize the exact resource, and each bound Secret needs the caller's exact `operate`.
 */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { idempotent } from "../idempotency.js"
import { ErrorWire } from "../../errors/index.js"
import { JsonBody } from "../middleware.js"
import { ConfigurationId, Envelope, ListEnvelope, NamespaceId } from "../../schema/index.js"
import { Schema } from "effect"
import { Authentication } from "../middleware.js"
import { PageParams } from "../iam/schemas.js"
import { Configuration, CreateConfiguration, UpdateConfiguration } from "./schemas.js"

const InNamespace = Schema.Struct({ namespaceId: NamespaceId })
const ConfigurationPath = Schema.Struct({ namespaceId: NamespaceId, configurationId: ConfigurationId })

export const ConfigurationList = Schema.Array(Configuration)

export const ConfigurationsApi = HttpApiGroup.make("configurations")
  .add(
    HttpApiEndpoint.post("create", "/namespaces/:namespaceId/configurations")
      .pipe(idempotent)
      .setPath(InNamespace)
      .setPayload(CreateConfiguration)
      .addSuccess(Envelope(Configuration, "ConfigurationResponse"), { status: 201 })
      .addError(ErrorWire.RESOURCE_CONFLICT)
      .addError(ErrorWire.NAMESPACE_NOT_READY)
      .middleware(JsonBody)
      .middleware(Authentication)
      .annotate(OpenApi.Summary, "Create a Configuration (needs configuration:create and secret:operate on each bound Secret)")
  )
  .add(
    HttpApiEndpoint.get("list", "/namespaces/:namespaceId/configurations")
      .setPath(InNamespace)
      .setUrlParams(PageParams)
      .addSuccess(ListEnvelope(ConfigurationList, "ConfigurationListResponse"))
      .middleware(Authentication)
      .annotate(OpenApi.Summary, "List a Namespace's Configurations (needs namespace:read; filtered by configuration:read)")
  )
  .add(
    HttpApiEndpoint.get("get", "/namespaces/:namespaceId/configurations/:configurationId")
      .setPath(ConfigurationPath)
      .addSuccess(Envelope(Configuration, "ConfigurationResponse"))
      .middleware(Authentication)
      .annotate(OpenApi.Summary, "Read a Configuration (needs configuration:read)")
  )
  .add(
    HttpApiEndpoint.patch("update", "/namespaces/:namespaceId/configurations/:configurationId")
      .setPath(ConfigurationPath)
      .setPayload(UpdateConfiguration)
      .addSuccess(Envelope(Configuration, "ConfigurationResponse"))
      .addError(ErrorWire.RESOURCE_CONFLICT)
      .middleware(JsonBody)
      .middleware(Authentication)
      .annotate(
        OpenApi.Summary,
        "Replace a Configuration's values and increment its generation (needs configuration:update and secret:operate on each bound Secret)"
      )
  )
  .add(
    HttpApiEndpoint.del("delete", "/namespaces/:namespaceId/configurations/:configurationId")
      .setPath(ConfigurationPath)
      .addSuccess(HttpApiSchema.NoContent)
      .addError(ErrorWire.RESOURCE_CONFLICT)
      .middleware(Authentication)
      .annotate(OpenApi.Summary, "Delete a Configuration; 409 while an Agent references it (needs configuration:delete)")
  )
  .addError(ErrorWire.FORBIDDEN)
  .annotate(OpenApi.Title, "Configurations")
  .annotate(OpenApi.Description, "Native runtime configuration documents of a Namespace and the Secrets bound to them")
