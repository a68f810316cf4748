/**
 * A Cookie header naming the session cookie twice (audit F8): a sibling host of a parent domain
 * can plant a cookie of that name, and whichever value came first would be used (login CSRF).
 * Every route that reads the session cookie refuses such a request with 401.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { createAccount, signedInSession } from "../../../testing/identity.js"
import { TestServer } from "../../../testing/server.js"
import { accountsTestLayer, expectData, expectError, ORIGIN, send, setCookieOf } from "./support/accountsServer.js"

const NAME = "svc.session_token"
const AMBIGUOUS = "The session cookie is ambiguous: it was sent more than once."

const session = (baseUrl: string, cookie: string) => send(baseUrl, "GET", "/api/auth/session", { cookie })
const signOut = (baseUrl: string, cookie: string) => send(baseUrl, "POST", "/api/auth/sign-out", { cookie, origin: ORIGIN })

const seeded = (email: string) =>
  Effect.gen(function* () {
    const account = yield* createAccount(email)
    return { account, issued: yield* signedInSession(account.userId) }
  })

describe("a duplicated session cookie", () => {
  it.layer(accountsTestLayer(), { timeout: 60_000 })((it) => {
    it.effect("two valid sessions, or a valid one beside garbage, in either order: 401 UNAUTHENTICATED", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const victim = yield* seeded("victim@example.test")
        const planted = yield* seeded("planted@example.test")
        for (const cookie of [
          `${NAME}=${planted.issued.token}; ${NAME}=${victim.issued.token}`,
          `${NAME}=${victim.issued.token}; ${NAME}=${planted.issued.token}`,
          `${NAME}=${victim.issued.token}; ${NAME}=garbage`,
          `${NAME}=garbage; other=1; ${NAME}=${victim.issued.token}`,
          `${NAME}=; ${NAME}=${victim.issued.token}`,
          ` ${NAME} =${victim.issued.token};${NAME}=${victim.issued.token}`
        ]) {
          const inspected = yield* session(baseUrl, cookie)
          expectError(inspected, 401, "UNAUTHENTICATED")
          expect(inspected.body.error.message).toBe(AMBIGUOUS)
          // A protected route, not only session inspection.
          const guarded = yield* send(baseUrl, "GET", "/installation", { cookie })
          expectError(guarded, 401, "UNAUTHENTICATED")
          expect(guarded.body.error.message).toBe(AMBIGUOUS)
        }
      }))

    it.effect("one session cookie, beside cookies of other names, still authenticates (200)", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const { account, issued } = yield* seeded("single@example.test")
        for (const cookie of [
          `${NAME}=${issued.token}`,
          `other=1; ${NAME}=${issued.token}; x${NAME}=garbage; ${NAME}x=garbage`
        ]) {
          expectData(yield* session(baseUrl, cookie), 200, {
            authenticated: true,
            sessionKey: issued.sessionKey,
            id: account.userId,
            email: account.email,
            name: account.email
          })
        }
      }))

    it.effect("sign-out with a duplicated session cookie: 401, neither session revoked, nothing cleared", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const first = yield* seeded("first@example.test")
        const second = yield* seeded("second@example.test")
        const result = yield* signOut(baseUrl, `${NAME}=${first.issued.token}; ${NAME}=${second.issued.token}`)
        expectError(result, 401, "UNAUTHENTICATED")
        expect(result.body.error.message).toBe(AMBIGUOUS)
        expect(setCookieOf(result)).toBeNull()
        expect((yield* session(baseUrl, `${NAME}=${first.issued.token}`)).status).toBe(200)
        expect((yield* session(baseUrl, `${NAME}=${second.issued.token}`)).status).toBe(200)
        expectData(yield* signOut(baseUrl, `${NAME}=${first.issued.token}`), 200, {})
      }))
  })
})
