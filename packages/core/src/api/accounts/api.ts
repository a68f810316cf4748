import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { idempotent } from "../idempotency.js"
import { ErrorWire } from "../../errors/index.js"
import { JsonBody } from "../middleware.js"
import { Envelope } from "../../schema/index.js"
import { Authentication } from "../middleware.js"
import { AccountReadOrigin, SessionInspection, SignInOrigin } from "../middleware.js"
import { humanSessionOnly } from "../security.js"
import {
  AccountRef,
  AccountState,
  CodehostBody,
  CreateAccountBody,
  CreatedAccount,
  Empty,
  Enrolment,
  IdproviderBody,
  MethodPath,
  MoveRecoveryBody,
  ProvidersState,
  RecoveryDesignation,
  RecoveryMove,
  SessionRead,
  SignInBody,
  SignInResult,
  SignInThrottledWire,
  UserIdPath,
  VersionBody
} from "./schemas.js"

const AccountRefResponse = Envelope(AccountRef, "AccountRefResponse")

/** The 429 of sign-in carries `Retry-After`; HttpApi has no way to declare a response header. */
const documentRetryAfter = <Operation extends Record<string, unknown>>(operation: Operation): Operation => {
  const responses = operation["responses"] as Record<string, { headers?: Record<string, unknown> }> | undefined
  const throttled = responses?.["429"]
  if (throttled !== undefined) {
    throttled.headers = {
      ...throttled.headers,
      "Retry-After": {
        description: "Seconds until sign-in attempts for this email are accepted again",
        schema: { type: "integer", minimum: 1, maximum: 60 }
      }
    }
  }
  return operation
}

// Middleware order: the last one added runs first, and all run before the body is decoded.
// Authentication is added last so that 401 wins over 403/415/400 (STYLE.md "Sharp edges").

/** Sign-in, sign-out, session inspection and the provider list (SPEC 4.1, 5.2-5.4). */
export const AuthSessionsApi = HttpApiGroup.make("authSessions")
  .add(
    HttpApiEndpoint.post("signInEmail", "/sign-in/email")
      .setPayload(SignInBody)
      .addSuccess(Envelope(SignInResult, "EmailSignInResponse"))
      .addError(ErrorWire.UNAUTHENTICATED)
      .addError(SignInThrottledWire)
      .middleware(JsonBody)
      .middleware(SignInOrigin)
      .annotate(OpenApi.Transform, documentRetryAfter)
      .annotate(OpenApi.Summary, "Sign in with email and password; the session is set only with Set-Cookie")
  )
  .add(
    HttpApiEndpoint.post("signOut", "/sign-out")
      .addSuccess(Envelope(Empty, "SignOutResponse"))
      .pipe(humanSessionOnly)
      .annotate(OpenApi.Summary, "Revoke the current session and clear its cookie")
  )
  .add(
    HttpApiEndpoint.get("session", "/session")
      .addSuccess(Envelope(SessionRead, "SessionResponse"))
      .middleware(SessionInspection)
      .annotate(OpenApi.Summary, "The current session's identity, or null when anonymous")
  )
  .add(
    HttpApiEndpoint.get("providers", "/providers")
      .addSuccess(Envelope(ProvidersState, "SignInProvidersResponse"))
      .annotate(OpenApi.Summary, "Which external sign-in providers are enabled")
  )
  .prefix("/api/auth")
  .annotate(OpenApi.Title, "Sessions")
  .annotate(OpenApi.Description, "Email and password sign-in, sign-out and session inspection")


/** Human accounts and the recovery designation (SPEC 4.1, 5.7): Installation administrators only. */
/** disable, enable and revoke: the same shape, an `expectedVersion` guarded state change. */
const stateChange = <const Name extends string>(name: Name, action: string, summary: string) =>
  HttpApiEndpoint.post(name, `/accounts/:userId/${action}`)
    .setPath(UserIdPath)
    .setPayload(VersionBody)
    .addSuccess(AccountRefResponse)
    .addError(ErrorWire.RESOURCE_CONFLICT)
    .middleware(JsonBody)
    .middleware(Authentication)
    .annotate(OpenApi.Summary, summary)

export const AuthAccountsApi = HttpApiGroup.make("authAccounts")
  .add(
    HttpApiEndpoint.post("createAccount", "/accounts")
      .pipe(idempotent)
      .setPayload(CreateAccountBody)
      .addSuccess(Envelope(CreatedAccount, "CreatedAccountResponse"), { status: 201 })
      .addError(ErrorWire.RESOURCE_CONFLICT)
      .middleware(JsonBody)
      .pipe(humanSessionOnly)
      .annotate(OpenApi.Summary, "Create an enrolled account with a password (no session is issued)")
  )
  .add(
    HttpApiEndpoint.get("readAccount", "/accounts/:userId")
      .setPath(UserIdPath)
      .addSuccess(Envelope(AccountState, "AccountStateResponse"))
      .middleware(AccountReadOrigin)
      .pipe(humanSessionOnly)
      .annotate(OpenApi.Summary, "An account's state, methods and version")
  )
  .add(stateChange("disableAccount", "disable", "Disable an account and revoke its sessions"))
  .add(stateChange("enableAccount", "enable", "Enable a disabled account"))
  .add(stateChange("revokeAccount", "revoke", "Revoke an account for good and revoke its sessions"))
  .add(
    HttpApiEndpoint.post("enrolAccount", "/accounts/:userId/enrol")
      .setPath(UserIdPath)
      .addSuccess(Envelope(Enrolment, "EnrolmentResponse"))
      .pipe(humanSessionOnly)
      .annotate(OpenApi.Summary, "Enrol an account (idempotent)")
  )
  .add(
    HttpApiEndpoint.post("detachMethod", "/accounts/:userId/methods/:methodId/detach")
      .setPath(MethodPath)
      .setPayload(VersionBody)
      .addSuccess(AccountRefResponse)
      .addError(ErrorWire.RESOURCE_CONFLICT)
      .middleware(JsonBody)
      .pipe(humanSessionOnly)
      .annotate(OpenApi.Summary, "Detach a sign-in method from an account")
  )
  .add(
    HttpApiEndpoint.post("linkCodehost", "/accounts/:userId/providers/codehost")
      .setPath(UserIdPath)
      .setPayload(CodehostBody)
      .addSuccess(AccountRefResponse)
      .addError(ErrorWire.RESOURCE_CONFLICT)
      .middleware(JsonBody)
      .pipe(humanSessionOnly)
      .annotate(OpenApi.Summary, "Attach a code-host identity to an account")
  )
  .add(
    HttpApiEndpoint.post("linkIdprovider", "/accounts/:userId/providers/idprovider")
      .setPath(UserIdPath)
      .setPayload(IdproviderBody)
      .addSuccess(AccountRefResponse)
      .addError(ErrorWire.RESOURCE_CONFLICT)
      .middleware(JsonBody)
      .pipe(humanSessionOnly)
      .annotate(OpenApi.Summary, "Attach an identity-provider identity to an account")
  )
  .add(
    HttpApiEndpoint.get("readRecovery", "/recovery")
      .addSuccess(Envelope(RecoveryDesignation, "RecoveryDesignationResponse"))
      .middleware(AccountReadOrigin)
      .pipe(humanSessionOnly)
      .annotate(OpenApi.Summary, "The recovery account designation")
  )
  .add(
    HttpApiEndpoint.post("moveRecovery", "/recovery")
      .setPayload(MoveRecoveryBody)
      .addSuccess(Envelope(RecoveryMove, "RecoveryMoveResponse"))
      .addError(ErrorWire.RESOURCE_CONFLICT)
      .middleware(JsonBody)
      .pipe(humanSessionOnly)
      .annotate(OpenApi.Summary, "Move the recovery designation to another administrator account")
  )
  .prefix("/api/auth")
  .annotate(OpenApi.Title, "Accounts")
  .annotate(OpenApi.Description, "Human accounts, their sign-in methods and the recovery designation")
