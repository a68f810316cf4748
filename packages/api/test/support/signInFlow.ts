/**
 * A browser's side of external sign-in for tests: a cookie jar, `start`, following the real
 * authorization URL (the mock provider redirects at once), the callback and `result`.
 */
import { Effect } from "effect"
import { call } from "../../../../testing/server.js"

export const ORIGIN = "http://127.0.0.1:8080"

/** Cookies by name, updated from `Set-Cookie` like a browser (Max-Age=0 removes). */
export class CookieJar {
  readonly cookies = new Map<string, string>()
  /** Every Set-Cookie line received, for assertions. */
  readonly received: Array<string> = []

  absorb(headers: Headers): void {
    for (const line of headers.getSetCookie()) {
      this.received.push(line)
      const [pair] = line.split(";", 1)
      const index = pair!.indexOf("=")
      const name = pair!.slice(0, index).trim()
      const value = pair!.slice(index + 1).trim()
      if (value === "" || /;\s*max-age=0(;|$)/i.test(line)) this.cookies.delete(name)
      else this.cookies.set(name, value)
    }
  }

  header(only?: ReadonlyArray<string>): string {
    return [...this.cookies]
      .filter(([name]) => only === undefined || only.includes(name))
      .map(([name, value]) => `${name}=${value}`)
      .join("; ")
  }
}

export const SESSION_COOKIE = "svc.session_token"
export const BINDING_COOKIE = "svc.signin_attempt"
export const RECEIPT_COOKIE = "svc.signin_receipt"

export type Provider = "codehost" | "idprovider"

export const start = (baseUrl: string, provider: Provider, jar: CookieJar, headers: Record<string, string> = { origin: ORIGIN }) =>
  Effect.promise(async () => {
    const result = await call(`${baseUrl}/api/auth/providers/${provider}/start`, { method: "POST", headers })
    jar.absorb(result.headers)
    return result
  })

/** Follows the authorization URL at the provider; returns the callback query it redirects with. */
export const authorize = (url: string) =>
  Effect.promise(async () => {
    const response = await fetch(url, { redirect: "manual" })
    await response.text()
    if (response.status !== 302) throw new Error(`the provider answered ${response.status}`)
    return new URL(response.headers.get("location")!)
  })

export const callback = (baseUrl: string, provider: Provider, query: string, jar: CookieJar) =>
  Effect.promise(async () => {
    const cookie = jar.header()
    const response = await fetch(`${baseUrl}/api/auth/providers/${provider}/callback${query}`, {
      redirect: "manual",
      headers: cookie === "" ? {} : { cookie }
    })
    const text = await response.text()
    jar.absorb(response.headers)
    return { status: response.status, location: response.headers.get("location"), headers: response.headers, text }
  })

export const result = (
  baseUrl: string,
  provider: Provider,
  attemptId: unknown,
  jar: CookieJar,
  headers: Record<string, string> = { origin: ORIGIN }
) =>
  Effect.promise(async () => {
    const cookie = jar.header()
    const response = await call(`${baseUrl}/api/auth/providers/${provider}/result`, {
      method: "POST",
      headers: { ...headers, "content-type": "application/json", ...(cookie === "" ? {} : { cookie }) },
      body: JSON.stringify({ attemptId })
    })
    jar.absorb(response.headers)
    return response
  })

/** start, authorize at the provider, callback: the browser's jar then holds what it got. */
export const signIn = (baseUrl: string, provider: Provider) =>
  Effect.gen(function* () {
    const jar = new CookieJar()
    const started = yield* start(baseUrl, provider, jar)
    if (started.status !== 200) throw new Error(`start answered ${started.status}: ${started.text}`)
    const attemptId: string = started.body.data.attemptId
    const redirect = yield* authorize(started.body.data.url)
    const completed = yield* callback(baseUrl, provider, redirect.search, jar)
    return { jar, attemptId, started, redirect, completed }
  })
