export { authenticate, authenticationLayer, AuthenticationLive } from "./authentication.js"
export { type AuthorizationError, authorize } from "./authorize.js"
export { resolveServiceKey, resolveSession } from "./credentials.js"
export { type Preauthorization, type Preauthorized, preauthorized } from "./preauthorization.js"
export { isSafeMethod, isTrustedBrowserMutation } from "./origin.js"
export { AuthSettings, type AuthSettingsShape } from "./settings.js"
export { DECOY_HASH, hashPassword, verifyPassword } from "./passwords.js"
export {
  AccountUnusable,
  clearSessionCookie,
  issueSession,
  type IssuedSession,
  SESSION_TTL,
  setSessionCookie,
  storeSession
} from "./sessions.js"
