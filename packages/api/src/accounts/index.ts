/** Accounts and sessions under /api/auth (SPEC 4.1 without service keys and provider flows). */
import { Layer } from "effect"
import { AuthAccountsLive } from "./accountsHttp.js"
import { AccountReadOriginLive, SessionInspectionLive, SignInOriginLive } from "./middleware.js"
import { AuthSessionsLive } from "./sessionsHttp.js"

export { AuthAccountsApi, AuthSessionsApi } from "@svc/core/api"

/** Both groups with the middlewares only they use; needs an SqlClient and AuthSettings. */
export const AccountsLive = Layer.mergeAll(AuthSessionsLive, AuthAccountsLive).pipe(
  Layer.provide(Layer.mergeAll(SignInOriginLive, AccountReadOriginLive, SessionInspectionLive))
)
