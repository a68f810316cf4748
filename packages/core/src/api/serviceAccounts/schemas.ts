/**
 * Request and response bodies of the service-account API (SPEC 2.11, 4.5; DESIGN §13).
 * Responses carry account metadata and credential readiness only: never a token, a Secret
 * value, the upstream account or credential id, or the Backend's settings.
 */
import { detailMessage, NamespaceId, RequestBody, ResourceName, ServiceAccountId, Timestamp } from "../../schema/index.js"
import { Schema } from "effect"

export const CreateServiceAccount = RequestBody({ name: ResourceName }).annotations({ identifier: "CreateServiceAccountRequest" })

/**
 * `POST .../credentials` takes `{}`: the Driver decides what it issues. Not `RequestBody({})`:
 * an Effect struct without fields is TypeScript's `{}` and accepts every non-null value, so
 * `{"x": 1}` or `"abc"` would issue a credential. A record whose values can be nothing refuses
 * a non-object as INVALID_TYPE and each field as UNKNOWN_FIELD at its pointer.
 */
export const IssueCredential = Schema.Record({
  key: Schema.String,
  value: Schema.Never.annotations({ message: detailMessage("UNKNOWN_FIELD", "the request takes no fields") })
}).annotations({
  identifier: "IssueServiceAccountCredentialRequest",
  // Every field named, as `RequestBody` reports them.
  parseOptions: { errors: "all" },
  // The OpenAPI document shows what the record means: an object without properties.
  jsonSchema: { type: "object", additionalProperties: false }
})

/** A Secret key: `value` is the one key a builtin Secret has (DESIGN §13). */
const SecretKeyName = Schema.String.pipe(
  Schema.minLength(1, { message: detailMessage("INVALID_VALUE", "must be at least 1 character") }),
  Schema.maxLength(253, { message: detailMessage("TOO_LONG", "must be at most 253 characters") }),
  Schema.pattern(/^[-._a-zA-Z0-9]+$/, { message: detailMessage("INVALID_FORMAT", "must be letters, digits, '-', '_' or '.'") })
)

/**
 * SPEC 4.5: a native reference `{kind: api_key, secretRef: {name, key}}`. `access_token` is the
 * Driver's own kind and cannot be set; `oauth_access_token` is unsupported for deployment.
 */
export const SetNativeCredential = RequestBody({
  kind: Schema.Literal("api_key").annotations({ message: detailMessage("INVALID_VALUE", `must be "api_key"`) }),
  secretRef: RequestBody({ name: ResourceName, key: SecretKeyName })
}).annotations({ identifier: "SetServiceAccountCredentialRequest" })

export const CredentialReadiness = Schema.Struct({
  kind: Schema.Literal("api_key", "oauth_access_token", "access_token"),
  /** Whether a deployment could use it now. */
  ready: Schema.Boolean,
  issuedAt: Schema.optional(Timestamp),
  expiresAt: Schema.optional(Timestamp)
}).annotations({ identifier: "ServiceAccountCredential" })

export const ServiceAccount = Schema.Struct({
  id: ServiceAccountId,
  namespaceId: NamespaceId,
  name: Schema.String,
  /** Backend-managed (an upstream account exists behind it) or native. */
  managed: Schema.Boolean,
  /**
   * `creating` while the upstream account's outcome is unknown (a lost answer: issuing or
   * deleting resolves it), `deleting` while a managed deletion is under way, else `ready`.
   */
  state: Schema.Literal("creating", "ready", "deleting"),
  credential: Schema.NullOr(CredentialReadiness),
  createdAt: Timestamp
}).annotations({ identifier: "ServiceAccount" })
export type ServiceAccount = typeof ServiceAccount.Type
