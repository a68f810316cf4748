import { Context } from "effect"

/** How the caller proved who it is. */
export type Credential =
  | { readonly _tag: "Session"; readonly sessionId: string; readonly accountId: string; readonly sessionKey: string }
  | { readonly _tag: "ServiceKey"; readonly keyId: string }

/** The authenticated caller of a request: a Principal, its scope, and its credential. */
export interface Caller {
  readonly principalId: string
  readonly kind: "human" | "service"
  /** A Namespace-scoped service principal reaches only this Namespace; null: Installation scope. */
  readonly namespaceId: string | null
  readonly credential: Credential
}

/** Provided by the authentication middleware to every protected handler. */
export class CurrentCaller extends Context.Tag("@svc/core/iam/CurrentCaller")<CurrentCaller, Caller>() {}
