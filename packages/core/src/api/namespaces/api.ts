/**
 * The Namespaces HTTP contract (SPEC 3, 4.2): create, list, read, delete. Every endpoint is
 * authenticated; handlers authorize the exact resource.
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { idempotent } from "../idempotency.js"
import { ErrorWire } from "../../errors/index.js"
import { JsonBody } from "../middleware.js"
import {
  detailMessage, DNS_LABEL, DNS_LABEL_MAX, Envelope, isBindableNamespaceName, ListEnvelope, NamespaceId, PatternString, RequestBody, RESERVED_NAMESPACE, Timestamp
} from "../../schema/index.js"
import { Schema } from "effect"
import { Authentication } from "../middleware.js"
import { PageParams, ResourceName } from "../iam/schemas.js"

/** SPEC 2.3: `deleted` is never a public status (a deleted Namespace is a 404 tombstone, SPEC 3). */
export const NamespaceStatus = Schema.Literal("provisioning", "ready", "failed", "deleting")

export const Namespace = Schema.Struct({
  id: NamespaceId,
  name: Schema.String,
  status: NamespaceStatus,
  existingNamespace: Schema.optionalWith(Schema.String, { exact: true }),
  createdAt: Timestamp,
  updatedAt: Timestamp
}).annotations({ identifier: "Namespace" })
export type Namespace = typeof Namespace.Type

/**
 * SPEC 2.3 `existingNamespace` names a namespace of the cluster, and reaches the Kubernetes API
 * in request paths: it must be what Kubernetes accepts as one, a DNS-1123 label (at most 63
 * characters, TOO_LONG; lowercase letters, digits and '-', starting and ending with a letter or
 * digit, INVALID_FORMAT), so `..`, `/` or `%2F` never reach a path. A label that names one of the
 * cluster's own namespaces (`default`, `kube-*`) is INVALID_VALUE: never a tenant's.
 */
export const ExistingNamespaceName = PatternString(DNS_LABEL, DNS_LABEL_MAX).pipe(
  Schema.filter(isBindableNamespaceName, {
    message: detailMessage("INVALID_VALUE", "must not be default or start with kube-"),
    jsonSchema: { not: { pattern: RESERVED_NAMESPACE.source } }
  })
).annotations({
  description: "An operator-prepared Kubernetes namespace to bind: a DNS-1123 label, not default or kube-*"
})

export const CreateNamespace = RequestBody({
  name: ResourceName,
  existingNamespace: Schema.optionalWith(ExistingNamespaceName, { exact: true })
}).annotations({ identifier: "CreateNamespaceRequest" })

export const NamespaceList = Schema.Array(Namespace)

const NamespacePath = Schema.Struct({ namespaceId: NamespaceId })

export const NamespacesApi = HttpApiGroup.make("namespaces")
  .add(
    HttpApiEndpoint.post("create", "/namespaces")
      .pipe(idempotent)
      .setPayload(CreateNamespace)
      .addSuccess(Envelope(Namespace, "NamespaceResponse"), { status: 201 })
      .addError(ErrorWire.RESOURCE_CONFLICT)
      .middleware(JsonBody)
      .middleware(Authentication)
      .annotate(
        OpenApi.Summary,
        "Create a Namespace, provisioned asynchronously (needs namespace:create; existingNamespace also needs installation:administer and a Compute Driver that supports it)"
      )
  )
  .add(
    HttpApiEndpoint.get("list", "/namespaces")
      .setUrlParams(PageParams)
      .addSuccess(ListEnvelope(NamespaceList, "NamespaceListResponse"))
      .middleware(Authentication)
      .annotate(OpenApi.Summary, "List the Namespaces the caller can read (filtered by namespace:read)")
  )
  .add(
    HttpApiEndpoint.get("get", "/namespaces/:namespaceId")
      .setPath(NamespacePath)
      .addSuccess(Envelope(Namespace, "NamespaceResponse"))
      .middleware(Authentication)
      .annotate(OpenApi.Summary, "Read one Namespace (needs namespace:read); deleted Namespaces are 404")
  )
  .add(
    HttpApiEndpoint.del("delete", "/namespaces/:namespaceId")
      .setPath(NamespacePath)
      .addSuccess(Envelope(Namespace, "NamespaceResponse"), { status: 202 })
      .addError(ErrorWire.NAMESPACE_NOT_EMPTY)
      .middleware(Authentication)
      .annotate(
        OpenApi.Summary,
        "Delete a Namespace, torn down asynchronously; 409 NAMESPACE_NOT_EMPTY while it holds resources (needs namespace:delete)"
      )
  )
  .addError(ErrorWire.FORBIDDEN)
  .annotate(OpenApi.Title, "Namespaces")
  .annotate(OpenApi.Description, "Tenancy and isolation boundaries, each with its own runtime space")
