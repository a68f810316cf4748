import { Schema } from "effect"
import { ErrorDetail } from "./detail.js"

/**
 * One class per SPEC 7.1 code. Handlers fail with these; `wire.ts` gives each its envelope
 * schema and status. Generated shape, written out so each class is a real named type.
 */
const fields = { message: Schema.String, details: Schema.optional(Schema.Array(ErrorDetail)) }
export class InvalidRequest extends Schema.TaggedError<InvalidRequest>()("InvalidRequest", fields) {}
export class Unauthenticated extends Schema.TaggedError<Unauthenticated>()("Unauthenticated", fields) {}
export class Forbidden extends Schema.TaggedError<Forbidden>()("Forbidden", fields) {}
export class NotFound extends Schema.TaggedError<NotFound>()("NotFound", fields) {}
export class MethodNotAllowed extends Schema.TaggedError<MethodNotAllowed>()("MethodNotAllowed", fields) {}
export class InstallationExists extends Schema.TaggedError<InstallationExists>()("InstallationExists", fields) {}
export class ResourceConflict extends Schema.TaggedError<ResourceConflict>()("ResourceConflict", fields) {}
export class AgentDeleting extends Schema.TaggedError<AgentDeleting>()("AgentDeleting", fields) {}
export class NamespaceNotReady extends Schema.TaggedError<NamespaceNotReady>()("NamespaceNotReady", fields) {}
export class NamespaceNotEmpty extends Schema.TaggedError<NamespaceNotEmpty>()("NamespaceNotEmpty", fields) {}
export class PayloadTooLarge extends Schema.TaggedError<PayloadTooLarge>()("PayloadTooLarge", fields) {}
export class UnsupportedMediaType extends Schema.TaggedError<UnsupportedMediaType>()("UnsupportedMediaType", fields) {}
export class UnknownOutcome extends Schema.TaggedError<UnknownOutcome>()("UnknownOutcome", fields) {}
export class NotImplemented extends Schema.TaggedError<NotImplemented>()("NotImplemented", fields) {}
export class InternalError extends Schema.TaggedError<InternalError>()("InternalError", fields) {}
export class DependencyUnavailable extends Schema.TaggedError<DependencyUnavailable>()("DependencyUnavailable", fields) {}
export class RepositoryOptionsUnavailable extends Schema.TaggedError<RepositoryOptionsUnavailable>()("RepositoryOptionsUnavailable", fields) {}
export class ModelDiscoveryCredentialsRejected extends Schema.TaggedError<ModelDiscoveryCredentialsRejected>()("ModelDiscoveryCredentialsRejected", fields) {}
export class ModelDiscoveryRateLimited extends Schema.TaggedError<ModelDiscoveryRateLimited>()("ModelDiscoveryRateLimited", fields) {}
export class ModelDiscoveryUnavailable extends Schema.TaggedError<ModelDiscoveryUnavailable>()("ModelDiscoveryUnavailable", fields) {}
export class ModelDiscoveryInvalidResponse extends Schema.TaggedError<ModelDiscoveryInvalidResponse>()("ModelDiscoveryInvalidResponse", fields) {}
export class PluginDiscoveryCredentialsRejected extends Schema.TaggedError<PluginDiscoveryCredentialsRejected>()("PluginDiscoveryCredentialsRejected", fields) {}
export class PluginDiscoveryRateLimited extends Schema.TaggedError<PluginDiscoveryRateLimited>()("PluginDiscoveryRateLimited", fields) {}
export class PluginDiscoveryUnavailable extends Schema.TaggedError<PluginDiscoveryUnavailable>()("PluginDiscoveryUnavailable", fields) {}
export class PluginDiscoveryInvalidResponse extends Schema.TaggedError<PluginDiscoveryInvalidResponse>()("PluginDiscoveryInvalidResponse", fields) {}
export class ChannelDirectoryCredentialsRejected extends Schema.TaggedError<ChannelDirectoryCredentialsRejected>()("ChannelDirectoryCredentialsRejected", fields) {}
export class ChannelDirectoryMissingScope extends Schema.TaggedError<ChannelDirectoryMissingScope>()("ChannelDirectoryMissingScope", fields) {}
export class ChannelDirectoryRateLimited extends Schema.TaggedError<ChannelDirectoryRateLimited>()("ChannelDirectoryRateLimited", fields) {}
export class ChannelDirectoryInvalidResponse extends Schema.TaggedError<ChannelDirectoryInvalidResponse>()("ChannelDirectoryInvalidResponse", fields) {}
export class ChannelDirectoryUnavailable extends Schema.TaggedError<ChannelDirectoryUnavailable>()("ChannelDirectoryUnavailable", fields) {}
export class ChannelCredentialRoleMismatch extends Schema.TaggedError<ChannelCredentialRoleMismatch>()("ChannelCredentialRoleMismatch", fields) {}
export class ChannelCredentialCredentialsRejected extends Schema.TaggedError<ChannelCredentialCredentialsRejected>()("ChannelCredentialCredentialsRejected", fields) {}
export class ChannelCredentialUnavailable extends Schema.TaggedError<ChannelCredentialUnavailable>()("ChannelCredentialUnavailable", fields) {}
export class ChannelCredentialBindingRequired extends Schema.TaggedError<ChannelCredentialBindingRequired>()("ChannelCredentialBindingRequired", fields) {}

/** The class of every code: `wire.ts` and the exhaustiveness test walk this record. */
export const ErrorClasses = {
  INVALID_REQUEST: InvalidRequest,
  UNAUTHENTICATED: Unauthenticated,
  FORBIDDEN: Forbidden,
  NOT_FOUND: NotFound,
  METHOD_NOT_ALLOWED: MethodNotAllowed,
  INSTALLATION_EXISTS: InstallationExists,
  RESOURCE_CONFLICT: ResourceConflict,
  AGENT_DELETING: AgentDeleting,
  NAMESPACE_NOT_READY: NamespaceNotReady,
  NAMESPACE_NOT_EMPTY: NamespaceNotEmpty,
  PAYLOAD_TOO_LARGE: PayloadTooLarge,
  UNSUPPORTED_MEDIA_TYPE: UnsupportedMediaType,
  UNKNOWN_OUTCOME: UnknownOutcome,
  NOT_IMPLEMENTED: NotImplemented,
  INTERNAL_ERROR: InternalError,
  DEPENDENCY_UNAVAILABLE: DependencyUnavailable,
  REPOSITORY_OPTIONS_UNAVAILABLE: RepositoryOptionsUnavailable,
  MODEL_DISCOVERY_CREDENTIALS_REJECTED: ModelDiscoveryCredentialsRejected,
  MODEL_DISCOVERY_RATE_LIMITED: ModelDiscoveryRateLimited,
  MODEL_DISCOVERY_UNAVAILABLE: ModelDiscoveryUnavailable,
  MODEL_DISCOVERY_INVALID_RESPONSE: ModelDiscoveryInvalidResponse,
  PLUGIN_DISCOVERY_CREDENTIALS_REJECTED: PluginDiscoveryCredentialsRejected,
  PLUGIN_DISCOVERY_RATE_LIMITED: PluginDiscoveryRateLimited,
  PLUGIN_DISCOVERY_UNAVAILABLE: PluginDiscoveryUnavailable,
  PLUGIN_DISCOVERY_INVALID_RESPONSE: PluginDiscoveryInvalidResponse,
  CHANNEL_DIRECTORY_CREDENTIALS_REJECTED: ChannelDirectoryCredentialsRejected,
  CHANNEL_DIRECTORY_MISSING_SCOPE: ChannelDirectoryMissingScope,
  CHANNEL_DIRECTORY_RATE_LIMITED: ChannelDirectoryRateLimited,
  CHANNEL_DIRECTORY_INVALID_RESPONSE: ChannelDirectoryInvalidResponse,
  CHANNEL_DIRECTORY_UNAVAILABLE: ChannelDirectoryUnavailable,
  CHANNEL_CREDENTIAL_ROLE_MISMATCH: ChannelCredentialRoleMismatch,
  CHANNEL_CREDENTIAL_CREDENTIALS_REJECTED: ChannelCredentialCredentialsRejected,
  CHANNEL_CREDENTIAL_UNAVAILABLE: ChannelCredentialUnavailable,
  CHANNEL_CREDENTIAL_BINDING_REQUIRED: ChannelCredentialBindingRequired,
} as const
