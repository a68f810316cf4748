/** Accounts and sessions under /api/auth (SPEC 4.1 without service keys and provider flows). */
import { Layer } from "effect"
import { AuthAccountsLive } from "./accountsHttp.js"
import { AuthSessionsLive } from "./sessionsHttp.js"

export { AuthAccountsApi, AuthSessionsApi } from "@svc/core/api"
export { AccountReadOriginLive, HumanSessionLive, SessionInspectionLive, SignInOriginLive } from "./middleware.js"

/** Both groups; their middlewares (sign-in Origin, account-read Origin, session inspection) are wired in the composition. */
export const AccountsLive = Layer.mergeAll(AuthSessionsLive, AuthAccountsLive)
