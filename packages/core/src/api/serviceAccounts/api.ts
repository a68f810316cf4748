/**
 * The service-account HTTP contract (SPEC 4.5). Every endpoint is authenticated; handlers
 * authorize the exact resource.
 */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { ErrorWire } from "../../errors/index.js"
import { Envelope, ListEnvelope, NamespaceId, PatternString } from "../../schema/index.js"
import { Schema } from "effect"
import { Authentication, JsonBody } from "../middleware.js"
import { idempotent } from "../idempotency.js"
import { PageParams } from "../iam/schemas.js"
import { CreateServiceAccount, IssueCredential, ServiceAccount, SetNativeCredential } from "./schemas.js"

const InNamespace = Schema.Struct({ namespaceId: NamespaceId })
/**
 * SPEC 4: `{serviceAccountId}` is `sa_<id>` (2.1 gives service accounts no UUID rule). Ours are
 * `sa_<uuidv4>`; another id of the shape names no account (404, not 400).
 */
const ServiceAccountIdParameter = PatternString(/^sa_[A-Za-z0-9._~-]{1,197}$/, 200).annotations({ identifier: "ServiceAccountIdParameter" })
const AccountPath = Schema.Struct({ namespaceId: NamespaceId, serviceAccountId: ServiceAccountIdParameter })

export const ServiceAccountList = Schema.Array(ServiceAccount)

export const ServiceAccountsApi = HttpApiGroup.make("serviceAccounts")
  .add(
    HttpApiEndpoint.post("create", "/namespaces/:namespaceId/service-accounts")
      .pipe(idempotent)
      .setPath(InNamespace)
      .setPayload(CreateServiceAccount)
      .addSuccess(Envelope(ServiceAccount, "ServiceAccountResponse"), { status: 201 })
      .addError(ErrorWire.RESOURCE_CONFLICT)
      .middleware(JsonBody)
      .middleware(Authentication)
      .annotate(OpenApi.Summary, "Create a service account; with a ServiceAccount Driver, also its upstream account (needs service_account:create)")
  )
  .add(
    HttpApiEndpoint.get("list", "/namespaces/:namespaceId/service-accounts")
      .setPath(InNamespace)
      .setUrlParams(PageParams)
      .addSuccess(ListEnvelope(ServiceAccountList, "ServiceAccountListResponse"))
      .middleware(Authentication)
      .annotate(OpenApi.Summary, "List a Namespace's service accounts (needs namespace:read; filtered by exact service_account:read)")
  )
  .add(
    HttpApiEndpoint.get("get", "/namespaces/:namespaceId/service-accounts/:serviceAccountId")
      .setPath(AccountPath)
      .addSuccess(Envelope(ServiceAccount, "ServiceAccountResponse"))
      .middleware(Authentication)
      .annotate(OpenApi.Summary, "Read a service account and its credential readiness (needs service_account:read)")
  )
  .add(
    HttpApiEndpoint.post("issueCredential", "/namespaces/:namespaceId/service-accounts/:serviceAccountId/credentials")
      .setPath(AccountPath)
      .setPayload(IssueCredential)
      .addSuccess(Envelope(ServiceAccount, "ServiceAccountResponse"), { status: 201 })
      .addError(ErrorWire.RESOURCE_CONFLICT)
      .middleware(JsonBody)
      .middleware(Authentication)
      .annotate(OpenApi.Summary, "Issue the account's one upstream credential; 409 the second time (needs service_account:update)")
  )
  .add(
    HttpApiEndpoint.patch("setCredential", "/namespaces/:namespaceId/service-accounts/:serviceAccountId/credential")
      .setPath(AccountPath)
      .setPayload(SetNativeCredential)
      .addSuccess(Envelope(ServiceAccount, "ServiceAccountResponse"))
      .addError(ErrorWire.RESOURCE_CONFLICT)
      .middleware(JsonBody)
      .middleware(Authentication)
      .annotate(OpenApi.Summary, "Set or replace a native account's api_key reference (needs service_account:update and secret:operate)")
  )
  .add(
    HttpApiEndpoint.del("delete", "/namespaces/:namespaceId/service-accounts/:serviceAccountId")
      .setPath(AccountPath)
      .addSuccess(HttpApiSchema.NoContent)
      .addError(ErrorWire.RESOURCE_CONFLICT)
      .middleware(Authentication)
      .annotate(OpenApi.Summary, "Delete a service account; 409 while an Agent uses it (needs service_account:delete)")
  )
  .addError(ErrorWire.FORBIDDEN)
  .annotate(OpenApi.Title, "Service accounts")
  .annotate(OpenApi.Description, "Namespace identities that link Agents to one model credential without exposing it")
