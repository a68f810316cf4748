/**
 * A sign-in racing an account disable (audit F6): the session is stored by a statement that
 * checks the account itself, so it is never stored for an account whose disable committed, and
 * it waits for a disable in flight instead of slipping in after its revocation of the others.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { storeSession } from "@svc/api"
import { SessionsRepo } from "@svc/core/db"
import { Deferred, Effect, Either, Fiber, Option } from "effect"
import { createAccount } from "../../../testing/identity.js"
import { TestServer } from "../../../testing/server.js"
import { accountsTestLayer, expectError, setCookieOf, signIn } from "./support/accountsServer.js"
import { lockWaiters } from "./support/races.js"

const sessionRows = (accountId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ n: number }>`SELECT count(*)::int AS n FROM sessions WHERE account_id = ${accountId}`).pipe(
      Effect.map((rows) => rows[0]!.n)
    )

describe("no session for a disabled account", () => {
  layer(accountsTestLayer(), { timeout: 60_000, excludeTestServices: true })((it) => {
    it.effect("storing a session for a disabled, revoked or unenrolled account fails with AccountUnusable and stores nothing", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const sessions = yield* Effect.provide(SessionsRepo, SessionsRepo.Default)
        const disabled = yield* createAccount("store-disabled@example.test")
        const revoked = yield* createAccount("store-revoked@example.test")
        const unenrolled = yield* createAccount("store-unenrolled@example.test")
        yield* sql`UPDATE accounts SET disabled = true WHERE id = ${disabled.userId}`
        yield* sql`UPDATE accounts SET revoked_at = now() WHERE id = ${revoked.userId}`
        yield* sql`UPDATE accounts SET enrolled_at = NULL WHERE id = ${unenrolled.userId}`
        for (const account of [disabled, revoked, unenrolled]) {
          const stored = yield* Effect.either(storeSession(sessions, account.userId))
          expect(Either.isLeft(stored) && stored.left._tag).toBe("AccountUnusable")
          expect(yield* sessionRows(account.userId)).toBe(0)
        }
        // An enabled account still gets its session.
        const usable = yield* createAccount("store-usable@example.test")
        expect(Either.isRight(yield* Effect.either(storeSession(sessions, usable.userId)))).toBe(true)
        expect(yield* sessionRows(usable.userId)).toBe(1)
      }))

    it.effect("a sign-in while a disable is in flight waits for it and answers 401 UNAUTHENTICATED, storing no session", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const sql = yield* SqlClient.SqlClient
        const account = yield* createAccount("racing@example.test")
        const disabling = yield* Deferred.make<void>()
        const commit = yield* Deferred.make<void>()
        // What account disable does (accountState.ts), held open after revoking the sessions.
        const disable = yield* Effect.fork(sql.withTransaction(Effect.gen(function* () {
          yield* sql`SELECT id FROM accounts WHERE id = ${account.userId} FOR UPDATE`
          yield* sql`UPDATE accounts SET disabled = true WHERE id = ${account.userId}`
          yield* sql`UPDATE sessions SET revoked_at = now() WHERE account_id = ${account.userId} AND revoked_at IS NULL`
          yield* Deferred.succeed(disabling, undefined)
          yield* Deferred.await(commit)
        })))
        yield* Deferred.await(disabling)
        // The sign-in reads the committed (enabled) account and checks the password meanwhile.
        const signingIn = yield* Effect.fork(signIn(baseUrl, account.email, account.password))
        // Until the sign-in blocks on the disable's lock (or, without the guard, finishes).
        while (Option.isNone(yield* Fiber.poll(signingIn)) && (yield* lockWaiters) === 0) {
          yield* Effect.sleep("20 millis")
        }
        yield* Deferred.succeed(commit, undefined)
        yield* Fiber.join(disable)
        const result = yield* Fiber.join(signingIn)
        expectError(result, 401, "UNAUTHENTICATED")
        expect(setCookieOf(result)).toBeNull()
        // No session row at all, so a later enable has nothing to bring back.
        expect(yield* sessionRows(account.userId)).toBe(0)
      }))
  })
})
