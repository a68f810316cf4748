import type { NativeAdminConfig } from "@svc/core/config"
import { Context } from "effect"
import * as os from "node:os"
import { type TrustedProxies, trustedProxiesOf } from "./clientAddress.js"
import type { PasswordHashLimits } from "./hashGate.js"

/** What authentication needs from the configuration (SPEC 5.1-5.3, 5.8). */
export interface AuthSettingsShape {
  /** The origin of SVC_BASE_URL: the only trusted browser Origin. */
  readonly trustedOrigin: string
  /**
   * The session cookie's name: host-only `svc.session_token` (`__Secure-svc.session_token` when
   * cookies are Secure), or with native admin on the shared `svc_shared.session_token`
   * (`__Secure-svc_shared.session_token`).
   */
  readonly cookieName: string
  /** With native admin on: the configured parent domain the shared cookie is scoped to. */
  readonly cookieDomain?: string | undefined
  /** With native admin on: the host-only name, cleared at sign-in and sign-out (SPEC 5.8). */
  readonly hostOnlyCookieName?: string | undefined
  /** Production: cookies are Secure. */
  readonly secureCookies: boolean
  /** Reverse proxies whose `X-Forwarded-For` is believed (SPEC 5.4 per-address limits); null: none. */
  readonly trustedProxies: TrustedProxies | null
  /** Whether any proxy is trusted (per-address sign-in limits are on). */
  readonly behindTrustedProxy: boolean
  /** How many password checks run at once and may wait (SVC_PASSWORD_HASH_*). */
  readonly passwordHashing: PasswordHashLimits
}

export class AuthSettings extends Context.Tag("@svc/api/AuthSettings")<AuthSettings, AuthSettingsShape>() {
  static readonly from = (options: {
    readonly baseUrl: string
    readonly production: boolean
    readonly trustedProxies?: ReadonlyArray<string> | undefined
    /** The Installation's `nativeAdmin`; the shared cookie only when it is enabled. */
    readonly nativeAdmin?: NativeAdminConfig | undefined
    /** Default: as many checks as cores, 16 waiting. */
    readonly passwordHashing?: PasswordHashLimits | undefined
  }): AuthSettingsShape => {
    const prefix = options.production ? "__Secure-" : ""
    const hostOnly = `${prefix}svc.session_token`
    const shared = options.nativeAdmin?.enabled === true ? options.nativeAdmin : undefined
    return {
      trustedOrigin: new URL(options.baseUrl).origin,
      cookieName: shared === undefined ? hostOnly : `${prefix}svc_shared.session_token`,
      ...(shared === undefined ? {} : { cookieDomain: shared.cookieDomain, hostOnlyCookieName: hostOnly }),
      secureCookies: options.production,
      trustedProxies: trustedProxiesOf(options.trustedProxies ?? []),
      behindTrustedProxy: (options.trustedProxies ?? []).length > 0,
      passwordHashing: options.passwordHashing ?? { concurrency: os.availableParallelism(), queue: 16 }
    }
  }
}
