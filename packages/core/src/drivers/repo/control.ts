/**
 * Bodies of the credential service's private control interface (SPEC 4.8), shared by the
 * service and the Repo Driver that calls it. Pure Schema.
 */
import { Schema } from "effect"
import { RepositoryProfileName } from "../../config/installation/registry.js"
import { NamespaceId, UUID_V4 } from "../../schema/ids.js"
import { detailMessage } from "../../schema/detailCodes.js"
import { BoundedInt, PatternString, RequestBody } from "../../schema/strings.js"

/** Session ids: `rs_` and a lowercase UUIDv4. */
export const SESSION_ID = new RegExp(`^rs_${UUID_V4}$`)
export const RepositorySessionId = PatternString(SESSION_ID, 39)

/** `X-Admission-Id`: 13-digit Unix-millisecond timestamp, hyphen, lowercase UUIDv4. */
export const ADMISSION_ID = new RegExp(`^([0-9]{13})-(${UUID_V4})$`)

const Profile = RepositoryProfileName.annotations({
  message: detailMessage("INVALID_VALUE", "must be git-read, git-write or git-full")
})

/** A frozen, admitted grant (the revision's `repositoryCredentials` entry). */
export const FrozenGrant = RequestBody({
  namespaceId: NamespaceId,
  repositoryRef: PatternString(/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/, 128),
  profile: Profile,
  fingerprint: PatternString(/^sha256:[0-9a-f]{64}$/, 71)
}).annotations({ identifier: "FrozenRepositoryGrant" })
export type FrozenGrant = typeof FrozenGrant.Type

export const OpenSessionRequest = RequestBody({
  durationSeconds: BoundedInt(60, 86400),
  /** Narrows the grant's profile for this session; absent: the grant's profile. */
  profile: Schema.optionalWith(Profile, { exact: true }),
  grant: FrozenGrant
}).annotations({ identifier: "OpenRepositorySession" })
export type OpenSessionRequest = typeof OpenSessionRequest.Type

export const SessionState = Schema.Literal("active", "CLOSED", "DISPOSED")
export type SessionState = typeof SessionState.Type

/** SPEC 2.14 public session status, with the cleanup status SPEC 4.8 reports separately. */
export const SessionStatus = Schema.Struct({
  sessionId: Schema.String,
  state: SessionState,
  deadlineWallMs: Schema.Number,
  binding: Schema.Struct({ providerInstanceId: Schema.String, repositoryId: Schema.String, grantId: Schema.String }),
  profile: RepositoryProfileName,
  /** `settled` once every installation token of the session is revoked or expired. */
  cleanup: Schema.Struct({ tokens: Schema.Literal("pending", "settled") })
}).annotations({ identifier: "RepositorySessionStatus" })
export type SessionStatus = typeof SessionStatus.Type

/** How a client reaches its one repository through the listener. */
export const ClientConfiguration = Schema.Struct({
  /** `owner/name`. */
  repository: Schema.String,
  /** The listener's origin: Git at `/{owner}/{name}.git`, the REST allowlist under `/api/v3`. */
  listenerUrl: Schema.String,
  gitUrl: Schema.String,
  apiUrl: Schema.String,
  /** Basic user name for Git; the bearer is the password. */
  username: Schema.Literal("x-access-token")
}).annotations({ identifier: "RepositoryClientConfiguration" })
export type ClientConfiguration = typeof ClientConfiguration.Type

/** 201: the only response that carries the bearer. */
export const IssuedSession = Schema.Struct({
  session: SessionStatus,
  client: ClientConfiguration,
  bearer: Schema.Redacted(Schema.String)
}).annotations({ identifier: "IssuedRepositorySession" })
export type IssuedSession = typeof IssuedSession.Type

/** 200 for a repeated admission: status only, never a second bearer. */
export const RepeatedSession = Schema.Struct({ session: SessionStatus }).annotations({
  identifier: "RepeatedRepositorySession"
})
export type RepeatedSession = typeof RepeatedSession.Type
