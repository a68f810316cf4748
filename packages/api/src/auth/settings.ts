import { Context } from "effect"
import { type TrustedProxies, trustedProxiesOf } from "./clientAddress.js"

/** What authentication needs from the configuration (SPEC 5.1-5.3). */
export interface AuthSettingsShape {
  /** The origin of SVC_BASE_URL: the only trusted browser Origin. */
  readonly trustedOrigin: string
  /** `svc.session_token`, or `__Secure-svc.session_token` when cookies are Secure. */
  readonly cookieName: string
  /** Production: cookies are Secure. */
  readonly secureCookies: boolean
  /** Reverse proxies whose `X-Forwarded-For` is believed (SPEC 5.4 per-address limits). */
  readonly trustedProxies: TrustedProxies
  /** Whether any proxy is trusted (per-address sign-in limits are on). */
  readonly behindTrustedProxy: boolean
}

export class AuthSettings extends Context.Tag("@svc/api/AuthSettings")<AuthSettings, AuthSettingsShape>() {
  static readonly from = (options: {
    readonly baseUrl: string
    readonly production: boolean
    readonly trustedProxies?: ReadonlyArray<string> | undefined
  }): AuthSettingsShape => ({
    trustedOrigin: new URL(options.baseUrl).origin,
    cookieName: options.production ? "__Secure-svc.session_token" : "svc.session_token",
    secureCookies: options.production,
    trustedProxies: trustedProxiesOf(options.trustedProxies ?? []),
    behindTrustedProxy: (options.trustedProxies ?? []).length > 0
  })
}
