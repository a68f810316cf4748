/**
 * The middleware *tags* of the HTTP contract: what each guard provides and how it may fail, so
 * the contract (and OpenAPI) is complete without the server. Their implementations live with
 * the servers (`@svc/api` auth and accounts, `@svc/core/http` body guards).
 */
import { HttpApiMiddleware } from "@effect/platform"
import { Context, type Option, Schema } from "effect"
import { ErrorWire } from "../errors/index.js"
import { type Caller, CurrentCaller } from "../iam/caller.js"

/**
 * The one authentication middleware of every protected route (SPEC 5.1-5.3, 5.9). It provides
 * the `CurrentCaller`; handlers then authorize the exact resource.
 */
export class Authentication extends HttpApiMiddleware.Tag<Authentication>()("Authentication", {
  provides: CurrentCaller,
  failure: Schema.Union(ErrorWire.UNAUTHENTICATED, ErrorWire.FORBIDDEN, ErrorWire.DEPENDENCY_UNAVAILABLE)
}) {}

/**
 * Endpoints only a human session may call (account management, sign-out; SPEC 5.5.4, 7.2): a
 * service key is 401. It runs right after `Authentication` and before the body is read, so a key
 * gets its 401 whatever it sends (see `humanSessionOnly`).
 */
export class HumanSession extends HttpApiMiddleware.Tag<HumanSession>()("HumanSession", {
  failure: ErrorWire.UNAUTHENTICATED
}) {}

/**
 * Guards every endpoint that takes a JSON body, before HttpApi decodes it:
 * 415 unless the body is `application/json`; 413 when it is larger than the limit (from
 * `Content-Length` when sent, else by counting); 400 for a body that is not UTF-8 or not JSON,
 * nests deeper than SPEC allows, or holds NUL or a reserved key anywhere. Declared with its
 * failures so OpenAPI shows them on each such endpoint.
 */
export class JsonBody extends HttpApiMiddleware.Tag<JsonBody>()("JsonBody", {
  failure: Schema.Union(ErrorWire.UNSUPPORTED_MEDIA_TYPE, ErrorWire.PAYLOAD_TOO_LARGE, ErrorWire.INVALID_REQUEST)
}) {}

/**
 * The same guard with the workspace write limit (SPEC 4.4, 8: a workspace file write's body is
 * at most 48 KiB, whatever the create-request limit is).
 */
export class WorkspaceWriteBody extends HttpApiMiddleware.Tag<WorkspaceWriteBody>()("WorkspaceWriteBody", {
  failure: Schema.Union(ErrorWire.UNSUPPORTED_MEDIA_TYPE, ErrorWire.PAYLOAD_TOO_LARGE, ErrorWire.INVALID_REQUEST)
}) {}

/**
 * SPEC 5.3 for sign-in: an `Origin`, when sent, must be the auth base URL's origin (a malformed
 * or different one is 403), and `Sec-Fetch-Site: cross-site` is rejected. A command-line client
 * may omit both headers.
 */
export class SignInOrigin extends HttpApiMiddleware.Tag<SignInOrigin>()("SignInOrigin", {
  failure: ErrorWire.FORBIDDEN
}) {}

/**
 * Account state reads (SPEC 4.1) need a trusted Origin; browsers send none on same-origin GETs,
 * so a read is refused only when it carries a different or malformed `Origin`, or a
 * `Sec-Fetch-Site` other than `same-origin` (docs/decisions/identity.md). Mutations are
 * covered by the authentication middleware.
 */
export class AccountReadOrigin extends HttpApiMiddleware.Tag<AccountReadOrigin>()("AccountReadOrigin", {
  failure: ErrorWire.FORBIDDEN
}) {}

/** The session of `GET /api/auth/session`: none for an anonymous caller. */
export class InspectedSession extends Context.Tag("@svc/api/accounts/InspectedSession")<
  InspectedSession,
  Option.Option<Caller>
>() {}

/**
 * Session inspection (SPEC 5.2, 5.5.4): a request with no credential at all is anonymous; any
 * credential present is checked exactly as on a protected route (a forged, expired or revoked
 * session, or a mismatched session key, is 401). A service key never yields a session: 401.
 */
export class SessionInspection extends HttpApiMiddleware.Tag<SessionInspection>()("SessionInspection", {
  provides: InspectedSession,
  failure: Schema.Union(ErrorWire.UNAUTHENTICATED, ErrorWire.FORBIDDEN, ErrorWire.DEPENDENCY_UNAVAILABLE)
}) {}

/**
 * SPEC 5.3 for the unauthenticated provider mutations (`start`, `result`): `Origin` exactly the
 * configured origin and `Sec-Fetch-Site`, when present, `same-origin`; else 403.
 */
export class BrowserOrigin extends HttpApiMiddleware.Tag<BrowserOrigin>()("BrowserOrigin", {
  failure: ErrorWire.FORBIDDEN
}) {}
