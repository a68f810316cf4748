/**
 * The whole API on loopback with both external sign-in providers configured against a real
 * OAuth 2 / OIDC server on loopback (oauth2-mock-server), over a fresh migrated database; and
 * the assertions the external sign-in tests share.
 */
import { SqlClient } from "@effect/sql"
import { ApiGroupsLive, AuthSettings, ExternalSignInSettings, SvcApi } from "@svc/api"
import { defaultInstallationConfig, InstallationConfiguration } from "@svc/core/config"
import { httpPipeline } from "@svc/core/http"
import { MethodId } from "@svc/core/schema"
import { Effect, Layer } from "effect"
import { expect } from "vitest"
import { migratedDatabaseLayer } from "../../../../testing/database.js"
import { createAccount } from "../../../../testing/identity.js"
import { LogCapture, REQUEST_ID, serveForTest } from "../../../../testing/server.js"
import { MockOAuthProvider } from "./oauthProvider.js"
import { ORIGIN, type Provider, RECEIPT_COOKIE, SESSION_COOKIE } from "./signInFlow.js"
import { testSecretDriver, unavailableCompute } from "../../../../testing/drivers.js"

export const auth = AuthSettings.from({ baseUrl: ORIGIN, production: false })
export const CONSOLE = `${ORIGIN}/console/`
export const CONSOLE_FAILED = `${ORIGIN}/console/?error=sign_in_failed`

/** codehost authenticates at the token endpoint with client_secret_post, idprovider with Basic. */
export const externalSignInApp = Layer.unwrapEffect(
  Effect.map(MockOAuthProvider, (provider) => {
    const providers = {
      codehost: provider.config({ tokenEndpointAuthMethod: "client_secret_post" }),
      idprovider: provider.config()
    }
    return serveForTest(httpPipeline(SvcApi, ApiGroupsLive, { development: true, maxBodyBytes: 448 * 1024 })).pipe(
      Layer.provide(Layer.merge(testSecretDriver, unavailableCompute)),
      Layer.provide(Layer.succeed(ExternalSignInSettings, ExternalSignInSettings.make({ baseUrl: ORIGIN, providers }))),
      Layer.provide(Layer.succeed(AuthSettings, auth)),
      Layer.provide(Layer.succeed(InstallationConfiguration, { ...defaultInstallationConfig, providers }))
    )
  })
).pipe(
  Layer.provideMerge(MockOAuthProvider.layer),
  Layer.provideMerge(LogCapture.layer),
  Layer.provideMerge(migratedDatabaseLayer)
)

/** An enrolled account with a password and an external identity of `provider`. */
export const enrolled = (email: string, provider: Provider, subject: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const account = yield* createAccount(email)
    yield* sql`
      INSERT INTO account_methods (id, account_id, provider_id, subject)
      VALUES (${MethodId.make()}, ${account.userId}, ${provider}, ${subject})
    `
    return account
  })

export const sessionsOf = (userId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ id: string; session_key: string; expires_at: Date; revoked_at: Date | null }>`
      SELECT id, session_key, expires_at, revoked_at FROM sessions WHERE account_id = ${userId} ORDER BY created_at
    `)

/** The annotations of the last `external sign-in failed` log line. */
export const lastFailure = Effect.map(LogCapture, ({ entries }) =>
  entries.filter((entry) => String(entry.message) === "external sign-in failed").at(-1)?.annotations)

export const expectError = (response: { status: number; body: unknown }, status: number, code: string) =>
  expect({ status: response.status, body: response.body }).toEqual({
    status,
    body: { error: { code, message: expect.any(String) }, meta: { requestId: expect.stringMatching(REQUEST_ID) } }
  })

/** The generic failure redirect, without a session or a receipt. */
export const expectFailedCallback = (completed: { status: number; location: string | null; headers: Headers }) => {
  expect(completed.status).toBe(302)
  expect(completed.location).toBe(CONSOLE_FAILED)
  const cookies = completed.headers.getSetCookie()
  expect(cookies.some((line) => line.startsWith(`${SESSION_COOKIE}=`) || line.startsWith(`${RECEIPT_COOKIE}=`))).toBe(false)
}
