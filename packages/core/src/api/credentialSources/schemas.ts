/**
 * Request and response bodies of the credential-sources API (SPEC 2.10, 4.6). A source names its
 * Secrets by reference; no response carries a value.
 */
import {
  BoundedString,
  CredentialSourceId,
  maxChars,
  NamespaceId,
  OneOf,
  PatternString,
  RequestBody,
  ResourceName,
  SecretId,
  SecretRef,
  wellFormedText,
  Timestamp
} from "../../schema/index.js"
import { Schema } from "effect"

/** A catalog field name: the keys of `config` and `secrets`. */
const FieldName = PatternString(/^[a-z][a-z0-9_]{0,63}$/, 64)

export const CredentialSourceType = PatternString(/^[a-z][a-z0-9-]{0,63}$/, 64)

const SecretReferenceBody = RequestBody({ kind: OneOf("secret"), namespaceId: NamespaceId, id: SecretId })
  .annotations({ identifier: "CredentialSourceSecretReference" })

export const CreateCredentialSource = RequestBody({
  name: ResourceName,
  type: CredentialSourceType,
  config: Schema.optional(Schema.Record({ key: FieldName, value: BoundedString(0, 2048).pipe(wellFormedText) })),
  secrets: Schema.optional(Schema.Record({ key: FieldName, value: SecretReferenceBody }))
}).annotations({ identifier: "CreateCredentialSourceRequest" })
export type CreateCredentialSource = typeof CreateCredentialSource.Type

export const CredentialSourceRef = Schema.Struct({
  kind: Schema.Literal("credential_source"),
  namespaceId: NamespaceId,
  id: CredentialSourceId
}).annotations({ identifier: "CredentialSourceRef" })

/** The live view of the source at the Credential Gateway (single read and create only). */
export const CredentialSourceStatus = Schema.Struct({
  state: Schema.Literal("ready", "pending", "failed", "absent"),
  reason: Schema.optional(Schema.String.pipe(maxChars(512)))
}).annotations({ identifier: "CredentialSourceStatus" })
export type CredentialSourceStatus = typeof CredentialSourceStatus.Type

export const CredentialSource = Schema.Struct({
  id: CredentialSourceId,
  namespaceId: NamespaceId,
  name: Schema.String,
  type: Schema.String,
  config: Schema.Record({ key: Schema.String, value: Schema.String }),
  secrets: Schema.Record({ key: Schema.String, value: SecretRef }),
  ref: CredentialSourceRef,
  state: Schema.Literal("registering", "ready", "deleting"),
  status: Schema.optional(CredentialSourceStatus),
  createdAt: Timestamp
}).annotations({ identifier: "CredentialSource" })
export type CredentialSource = typeof CredentialSource.Type
