import { Schema } from "effect"
import { detailMessage } from "./detailCodes.js"

/** Lowercase UUIDv4, as every generated identifier uses (SPEC 2.1). */
export const UUID_V4 = "[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"

/** Identifier prefixes: SPEC 2.1, plus the IAM resources of DESIGN §6 and work items. */
export const IdPrefixes = {
  namespace: "ns",
  agent: "agt",
  configuration: "cfg",
  revision: "rev",
  credentialSource: "cs",
  secret: "sec",
  serviceAccount: "sa",
  request: "req",
  role: "role",
  binding: "bnd",
  servicePrincipal: "sp",
  preset: "pre",
  principal: "prn",
  serviceKey: "key",
  work: "wrk",
  installation: "inst",
  user: "usr",
  method: "mth",
  session: "ses",
  restriction: "rst"
} as const

export type IdKind = keyof typeof IdPrefixes

const randomUuidV4 = (): string => globalThis.crypto.randomUUID()

const makeId = <const Prefix extends string, const Brand extends string>(prefix: Prefix, brand: Brand) => {
  const regex = new RegExp(`^${prefix}_${UUID_V4}$`)
  const schema = Schema.String.pipe(
    Schema.pattern(regex, { message: detailMessage("INVALID_FORMAT") }),
    Schema.brand(brand)
  ).annotations({
    identifier: brand,
    description: `${prefix}_ followed by a lowercase UUIDv4`,
    jsonSchema: { type: "string", pattern: regex.source }
  })
  // The schema's own `make` (check and brand), kept before `make` below replaces it.
  const checked = schema.make.bind(schema)
  return Object.assign(schema, {
    prefix,
    /**
     * A fresh random identifier; given a value, that value checked and branded (what the schema's
     * own `make` does: an argument is never silently replaced by a fresh id).
     */
    make: (value?: string): typeof schema.Type =>
      value === undefined ? `${prefix}_${randomUuidV4()}` as typeof schema.Type : checked(value as Parameters<typeof checked>[0]),
    /** True when `value` is a well-formed identifier of this kind. */
    isValid: (value: unknown): value is typeof schema.Type => typeof value === "string" && regex.test(value)
  })
}

export const NamespaceId = makeId(IdPrefixes.namespace, "NamespaceId")
export type NamespaceId = typeof NamespaceId.Type
export const AgentId = makeId(IdPrefixes.agent, "AgentId")
export type AgentId = typeof AgentId.Type
export const ConfigurationId = makeId(IdPrefixes.configuration, "ConfigurationId")
export type ConfigurationId = typeof ConfigurationId.Type
/** An AgentRevision's id; also the id of the deployment that rolls it out. */
export const RevisionId = makeId(IdPrefixes.revision, "RevisionId")
export type RevisionId = typeof RevisionId.Type
export const CredentialSourceId = makeId(IdPrefixes.credentialSource, "CredentialSourceId")
export type CredentialSourceId = typeof CredentialSourceId.Type
export const SecretId = makeId(IdPrefixes.secret, "SecretId")
export type SecretId = typeof SecretId.Type
export const ServiceAccountId = makeId(IdPrefixes.serviceAccount, "ServiceAccountId")
export type ServiceAccountId = typeof ServiceAccountId.Type
export const RequestId = makeId(IdPrefixes.request, "RequestId")
export type RequestId = typeof RequestId.Type
export const RoleId = makeId(IdPrefixes.role, "RoleId")
export type RoleId = typeof RoleId.Type
export const BindingId = makeId(IdPrefixes.binding, "BindingId")
export type BindingId = typeof BindingId.Type
export const ServicePrincipalId = makeId(IdPrefixes.servicePrincipal, "ServicePrincipalId")
export type ServicePrincipalId = typeof ServicePrincipalId.Type
export const PresetId = makeId(IdPrefixes.preset, "PresetId")
export type PresetId = typeof PresetId.Type
export const PrincipalId = makeId(IdPrefixes.principal, "PrincipalId")
export type PrincipalId = typeof PrincipalId.Type
export const ServiceKeyId = makeId(IdPrefixes.serviceKey, "ServiceKeyId")
export type ServiceKeyId = typeof ServiceKeyId.Type
export const WorkId = makeId(IdPrefixes.work, "WorkId")
export type WorkId = typeof WorkId.Type
export const InstallationId = makeId(IdPrefixes.installation, "InstallationId")
export type InstallationId = typeof InstallationId.Type
/** A human account's id (`userId` in SPEC 4.1). */
export const UserId = makeId(IdPrefixes.user, "UserId")
export type UserId = typeof UserId.Type
/** A sign-in method of an account (password or an external identity). */
export const MethodId = makeId(IdPrefixes.method, "MethodId")
export type MethodId = typeof MethodId.Type
export const SessionId = makeId(IdPrefixes.session, "SessionId")
export type SessionId = typeof SessionId.Type
export const RestrictionId = makeId(IdPrefixes.restriction, "RestrictionId")
export type RestrictionId = typeof RestrictionId.Type

/** Every identifier schema, by kind: one place to check that each prefix is covered. */
export const Ids = {
  namespace: NamespaceId,
  agent: AgentId,
  configuration: ConfigurationId,
  revision: RevisionId,
  credentialSource: CredentialSourceId,
  secret: SecretId,
  serviceAccount: ServiceAccountId,
  request: RequestId,
  role: RoleId,
  binding: BindingId,
  servicePrincipal: ServicePrincipalId,
  preset: PresetId,
  principal: PrincipalId,
  serviceKey: ServiceKeyId,
  work: WorkId,
  installation: InstallationId,
  user: UserId,
  method: MethodId,
  session: SessionId,
  restriction: RestrictionId
} as const satisfies Record<IdKind, { readonly prefix: string }>
