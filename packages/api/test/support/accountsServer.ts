/**
 * The real API for the accounts and sessions tests: every group of SvcApi through the real
 * pipeline and authentication, on a loopback port, over a fresh migrated database (the SqlClient
 * stays available to seed and inspect), with a chosen environment and Installation providers.
 */
import { SqlClient } from "@effect/sql"
import { ApiGroupsLive, AuthSettings, SvcApi } from "@svc/api"
import { decodeInstallationConfig, defaultInstallationConfig, InstallationConfiguration } from "@svc/core/config"
import { httpPipeline } from "@svc/core/http"
import { Effect, Either, Layer } from "effect"
import { expect } from "vitest"
import { migratedDatabaseLayer } from "../../../../testing/database.js"
import { bindInstallationAdmin, createAccount, signedInSession } from "../../../../testing/identity.js"
import { call, REQUEST_ID, serveForTest } from "../../../../testing/server.js"
import { testSecretDriver, unavailableCompute } from "../../../../testing/drivers.js"

export const ORIGIN = "http://127.0.0.1:8080"
export const PRODUCTION_ORIGIN = "https://svc.example.test"

const oauth = (name: string) => ({
  issuer: `https://${name}.example.test`,
  authorizationUrl: `https://${name}.example.test/authorize`,
  tokenUrl: `https://${name}.example.test/token`,
  userInfoUrl: `https://${name}.example.test/user`,
  clientId: `${name}-client`,
  clientSecret: `${name}-client-secret-value`
})

/** An Installation configuration with the named external providers enabled. */
export const withProviders = (...names: ReadonlyArray<"codehost" | "idprovider">) => {
  const decoded = decodeInstallationConfig("test", { providers: Object.fromEntries(names.map((n) => [n, oauth(n)])) })
  if (Either.isLeft(decoded)) throw new Error(JSON.stringify(decoded.left.problems))
  return decoded.right
}

export interface AppOptions {
  readonly production?: boolean
  readonly providers?: ReadonlyArray<"codehost" | "idprovider">
  /** SVC_TRUSTED_PROXIES of the server under test. */
  readonly trustedProxies?: ReadonlyArray<string>
  /** SVC_PASSWORD_HASH_CONCURRENCY / SVC_PASSWORD_HASH_QUEUE of the server under test. */
  readonly passwordHashing?: { readonly concurrency: number; readonly queue: number }
}

export const settingsFor = (options: AppOptions = {}) =>
  AuthSettings.from({
    baseUrl: options.production ? PRODUCTION_ORIGIN : ORIGIN,
    production: options.production ?? false,
    trustedProxies: options.trustedProxies,
    passwordHashing: options.passwordHashing
  })

export const accountsTestLayer = (options: AppOptions = {}) =>
  serveForTest(httpPipeline(SvcApi, ApiGroupsLive, { development: true, maxBodyBytes: 448 * 1024 })).pipe(
    Layer.provide(Layer.merge(testSecretDriver, unavailableCompute)),
    Layer.provide(Layer.succeed(AuthSettings, settingsFor(options))),
    Layer.provide(Layer.succeed(
      InstallationConfiguration,
      options.providers && options.providers.length > 0 ? withProviders(...options.providers) : defaultInstallationConfig
    )),
    Layer.provideMerge(migratedDatabaseLayer)
  )

export type Headers = Record<string, string>
export type Result = Awaited<ReturnType<typeof call>>

export const cookieHeader = (token: string, options: AppOptions = {}): Headers => ({
  cookie: `${settingsFor(options).cookieName}=${token}`
})
/** A browser-like session request: the cookie and the trusted Origin. */
export const browser = (token: string, options: AppOptions = {}): Headers => ({
  ...cookieHeader(token, options),
  origin: options.production ? PRODUCTION_ORIGIN : ORIGIN
})

export const send = (baseUrl: string, method: string, path: string, headers: Headers = {}, body?: unknown) =>
  Effect.promise(() =>
    call(`${baseUrl}${path}`, {
      method,
      headers: body === undefined ? headers : { "content-type": "application/json", ...headers },
      ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) })
    })
  )

export const expectError = (result: Result, status: number, code: string, details?: ReadonlyArray<unknown>) => {
  expect({ status: result.status, body: result.body }).toEqual({
    status,
    body: {
      error: { code, message: expect.any(String), ...(details === undefined ? {} : { details }) },
      meta: { requestId: expect.stringMatching(REQUEST_ID) }
    }
  })
  expect(result.body.error.message.length).toBeLessThanOrEqual(256)
  expect(result.headers.get("x-request-id")).toBe(result.body.meta.requestId)
}

export const expectData = (result: Result, status: number, data: unknown) => {
  expect({ status: result.status, body: result.body }).toEqual({
    status,
    body: { data, meta: { requestId: expect.stringMatching(REQUEST_ID) } }
  })
}

/** The session token a response set, if any. */
export const setCookieOf = (result: Result): string | null => result.headers.get("set-cookie")

export const tokenFrom = (result: Result, options: AppOptions = {}): string => {
  const header = setCookieOf(result)
  const name = settingsFor(options).cookieName
  const match = header === null ? null : new RegExp(`${name.replace(/[.]/g, "\\.")}=([^;]*)`).exec(header)
  if (match === null) throw new Error(`no ${name} cookie in ${header}`)
  return match[1]!
}

export const signIn = (baseUrl: string, email: string, password: string, headers: Headers = {}) =>
  send(baseUrl, "POST", "/api/auth/sign-in/email", headers, { email, password })

/** How many accounts exist in the file's database. */
export const accountCount = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  return (yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM accounts`)[0]!.n
})

export const auditRows = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  return yield* sql<{ kind: string; outcome: string; actor_principal_id: string | null; resource_id: string | null; details: Record<string, unknown> }>`
    SELECT kind, outcome, actor_principal_id, resource_id, details FROM audit_events ORDER BY id
  `.pipe(Effect.orDie)
})

export const auditText = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql<{ row: string }>`SELECT row_to_json(a)::text AS row FROM audit_events a`.pipe(Effect.orDie)
  return rows.map((r) => r.row).join("\n")
})

/** An Installation administrator with a session, and the browser headers to act as it. */
export const seedAdministrator = (email: string, options: AppOptions = {}) =>
  Effect.gen(function* () {
    const account = yield* createAccount(email)
    yield* bindInstallationAdmin(account.principalId)
    const session = yield* signedInSession(account.userId)
    return { account, session, headers: browser(session.token, options) }
  })

/** An account with a session but no grant. */
export const seedMember = (email: string, options: AppOptions = {}) =>
  Effect.gen(function* () {
    const account = yield* createAccount(email)
    const session = yield* signedInSession(account.userId)
    return { account, session, headers: browser(session.token, options) }
  })
