import { HttpApiSchema } from "@effect/platform"
import { ErrorMessage } from "../../errors/index.js"
import { BoundedInt, BoundedString, CurrentRequestId, detailMessage, Limits, Meta, PatternString, RequestBody, wellFormedText } from "../../schema/index.js"
import { Effect, ParseResult, Schema } from "effect"

// Request bodies and response data of SPEC 4.1 (accounts, sessions, recovery), 2.12 and 8.

// Stored as text, where PostgreSQL's driver would turn an unpaired surrogate into U+FFFD: the
// account would hold other text than the one it answered with.
const Email = BoundedString(Limits.accountEmail.min, Limits.accountEmail.max).pipe(wellFormedText)
const Password = BoundedString(Limits.accountPassword.min, Limits.accountPassword.max).pipe(wellFormedText)
const ExpectedVersion = BoundedInt(Limits.expectedVersion.min, Limits.expectedVersion.max)

/** A code-host user id: 1-20 digits, no leading zero. */
export const CodehostSubject = PatternString(/^[1-9][0-9]{0,19}$/, 20)
/** An identity-provider subject: 1-255 printable non-space ASCII characters. */
export const IdproviderSubject = Schema.String.pipe(
  Schema.minLength(1, { message: detailMessage("INVALID_VALUE", "must not be empty") }),
  Schema.maxLength(255, { message: detailMessage("TOO_LONG", "must be at most 255 characters") }),
  Schema.pattern(/^[\x21-\x7e]+$/, { message: detailMessage("INVALID_FORMAT") })
)

export const SignInBody = RequestBody({ email: Email, password: Password }).annotations({ identifier: "EmailSignInRequest" })

export const SignInResult = Schema.Struct({
  authenticated: Schema.Literal(true),
  sessionKey: Schema.optional(Schema.String)
}).annotations({ identifier: "EmailSignInResult" })

/** `{}`: documented as an object with no properties (a bare `Struct({})` means "any object"). */
export const Empty = Schema.Struct({}).annotations({
  identifier: "Empty",
  jsonSchema: { type: "object", properties: {}, additionalProperties: false }
})

export const SessionIdentity = Schema.Struct({
  authenticated: Schema.Literal(true),
  sessionKey: Schema.String,
  id: Schema.String,
  email: Schema.String,
  name: Schema.String
}).annotations({ identifier: "SessionIdentity" })

export const SessionRead = Schema.NullOr(SessionIdentity)

export const ProvidersState = Schema.Struct({
  codehost: Schema.Boolean,
  idprovider: Schema.Boolean,
  sessionBinding: Schema.Boolean
}).annotations({ identifier: "SignInProviders" })

export const CreateAccountBody = RequestBody({
  email: Email,
  password: Password,
  name: Schema.optional(BoundedString(Limits.accountName.min, Limits.accountName.max).pipe(wellFormedText)),
  roleId: Schema.optional(BoundedString(Limits.accountRoleId.min, Limits.accountRoleId.max)),
  codehost: Schema.optional(RequestBody({ subject: CodehostSubject }))
}).annotations({ identifier: "CreateAccountRequest" })

export const CreatedAccount = Schema.Struct({
  email: Schema.String,
  id: Schema.String,
  name: Schema.String,
  principalId: Schema.String
}).annotations({ identifier: "CreatedAccount" })

export const AccountMethod = Schema.Struct({
  methodId: Schema.String,
  providerId: Schema.Literal("password", "codehost", "idprovider"),
  subject: Schema.String
}).annotations({ identifier: "AccountMethod" })

export const AccountState = Schema.Struct({
  disabled: Schema.Boolean,
  methods: Schema.Array(AccountMethod),
  principalId: Schema.String,
  userId: Schema.String,
  version: Schema.Int
}).annotations({ identifier: "AccountState" })

export const UserIdPath = Schema.Struct({ userId: BoundedString(1, 200) })
export const MethodPath = Schema.Struct({ userId: BoundedString(1, 200), methodId: BoundedString(1, 200) })

export const VersionBody = RequestBody({ expectedVersion: ExpectedVersion }).annotations({ identifier: "ExpectedVersionRequest" })
export const CodehostBody = RequestBody({ expectedVersion: ExpectedVersion, subject: CodehostSubject }).annotations({
  identifier: "LinkCodehostRequest"
})
export const IdproviderBody = RequestBody({ expectedVersion: ExpectedVersion, subject: IdproviderSubject }).annotations({
  identifier: "LinkIdproviderRequest"
})

export const AccountRef = Schema.Struct({ userId: Schema.String }).annotations({ identifier: "AccountRef" })

export const Enrolment = Schema.Struct({
  created: Schema.Boolean,
  principalId: Schema.String,
  userId: Schema.String,
  version: Schema.Int
}).annotations({ identifier: "Enrolment" })

export const RecoveryDesignation = Schema.Struct({
  methodId: Schema.String,
  principalId: Schema.String,
  userId: Schema.String
}).annotations({ identifier: "RecoveryDesignation" })

export const MoveRecoveryBody = RequestBody({
  expectedCurrentUserId: BoundedString(1, 200),
  expectedVersion: ExpectedVersion,
  userId: BoundedString(1, 200)
}).annotations({ identifier: "MoveRecoveryRequest" })

export const RecoveryMove = Schema.Struct({
  changed: Schema.Boolean,
  methodId: Schema.String,
  principalId: Schema.String,
  userId: Schema.String
}).annotations({ identifier: "RecoveryMove" })

/**
 * Too many failed sign-ins (SPEC 5.4, 7.2): 429 with `Retry-After`. SPEC 7.1 has no code of its
 * own for it, so the envelope carries `UNAUTHENTICATED` (docs/decisions/identity.md). The
 * handler sends it as a response (HttpApi cannot add a header to a declared error); this class
 * and its wire schema document exactly that response.
 */
export class SignInThrottled extends Schema.TaggedError<SignInThrottled>()("SignInThrottled", {
  message: Schema.String
}) {}

export const SignInThrottledWire = Schema.transformOrFail(
  Schema.Struct({
    error: Schema.Struct({ code: Schema.Literal("UNAUTHENTICATED"), message: ErrorMessage }),
    meta: Meta
  }).annotations({
    identifier: "SignInThrottled",
    description: "429 UNAUTHENTICATED: too many failed sign-ins; retry after the Retry-After seconds"
  }),
  SignInThrottled,
  {
    strict: true,
    decode: ({ error }) => ParseResult.succeed(new SignInThrottled({ message: error.message })),
    encode: (value) =>
      Effect.map(CurrentRequestId, (requestId) => ({
        error: { code: "UNAUTHENTICATED" as const, message: value.message },
        meta: { requestId }
      }))
  }
).annotations({
  ...HttpApiSchema.annotations({ status: 429 }),
  description: "UNAUTHENTICATED with status 429: too many failed sign-ins; retry after Retry-After seconds"
})
