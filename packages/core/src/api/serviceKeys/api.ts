import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { idempotentWithheld } from "../idempotency.js"
import { ErrorWire } from "../../errors/index.js"
import { JsonBody } from "../middleware.js"
import {
  BoundedInt,
  BoundedString,
  detailMessage,
  Envelope,
  Limits,
  NamespaceId,
  RequestBody,
  Timestamp,
  UUID_V4,
  wellFormedText
} from "../../schema/index.js"
import { Schema } from "effect"
import { Authentication } from "../middleware.js"

const { serviceKeyName, serviceKeyExpiresInSeconds } = Limits

/** SPEC 8: 1-32 characters, not blank. */
export const ServiceKeyName = BoundedString(serviceKeyName.min, serviceKeyName.max).pipe(
  wellFormedText,
  Schema.filter((name) => name.trim().length > 0, { message: detailMessage("INVALID_VALUE", "must not be blank") })
)

/** `POST /api/auth/service-keys` (SPEC 4.1, 5.5). Other fields are rejected. */
export const IssueServiceKeyRequest = RequestBody({
  servicePrincipalId: BoundedString(1, 200),
  name: ServiceKeyName,
  namespaceId: Schema.optional(NamespaceId),
  expiresIn: Schema.optional(
    BoundedInt(serviceKeyExpiresInSeconds.min, serviceKeyExpiresInSeconds.max).annotations({
      description: `Lifetime in seconds; default ${serviceKeyExpiresInSeconds.default} (30 days)`
    })
  )
}).annotations({ identifier: "IssueServiceKeyRequest" })

// Response ids are plain strings (their patterns documented only), so encoding never fails.
const documentedId = (prefix: string) =>
  Schema.String.annotations({ jsonSchema: { type: "string", pattern: `^${prefix}_${UUID_V4}$` } })

/** SPEC 2.12: the issue response; `key` is the one-time plaintext. */
export const IssuedServiceKey = Schema.Struct({
  id: documentedId("key"),
  servicePrincipalId: Schema.String,
  namespaceId: Schema.optional(documentedId("ns")),
  name: Schema.String,
  expiresAt: Timestamp,
  key: Schema.String.annotations({ description: "The key itself, shown only in this response" })
}).annotations({ identifier: "IssuedServiceKey" })

export const RevokedServiceKey = Schema.Struct({
  id: Schema.String,
  revoked: Schema.Literal(true)
}).annotations({ identifier: "RevokedServiceKey" })

export const ServiceKeyPath = Schema.Struct({ keyId: BoundedString(1, 200) })

/**
 * Service API keys. Authentication runs before the body checks (added last, so it runs first):
 * a request without credentials is 401 whatever its body.
 */
export const ServiceKeysApi = HttpApiGroup.make("serviceKeys")
  .add(
    HttpApiEndpoint.post("issue", "/api/auth/service-keys")
      .pipe(idempotentWithheld)
      .setPayload(IssueServiceKeyRequest)
      .addSuccess(Envelope(IssuedServiceKey, "IssuedServiceKeyResponse"), { status: 201 })
      .addError(ErrorWire.FORBIDDEN)
      .middleware(JsonBody)
      .middleware(Authentication)
      .annotate(OpenApi.Summary, "Issue a service API key")
      .annotate(
        OpenApi.Description,
        "Needs administer on the Installation and every grant of the key's principal. The key is returned once."
      )
  )
  .add(
    HttpApiEndpoint.del("revoke", "/api/auth/service-keys/:keyId")
      .setPath(ServiceKeyPath)
      .addSuccess(Envelope(RevokedServiceKey, "RevokedServiceKeyResponse"))
      .addError(ErrorWire.FORBIDDEN)
      .middleware(Authentication)
      .annotate(OpenApi.Summary, "Revoke a service API key")
  )
  .annotate(OpenApi.Title, "Service keys")
  .annotate(OpenApi.Description, "Service API keys for non-Agent automation (x-api-key)")
