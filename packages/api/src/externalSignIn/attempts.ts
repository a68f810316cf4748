/**
 * Sign-in attempts (migration 0004, `SignInAttemptsRepo`): created by `start`, consumed once by
 * the callback, and redeemed once through the result receipt. Secrets are stored as digests.
 */
import type { SqlError } from "@effect/sql/SqlError"
import { AccountsRepo, SignInAttemptsRepo } from "@svc/core/db"
import { digestOf } from "@svc/core/iam"
import { Duration, Effect, Option } from "effect"
import type { ProviderId } from "./settings.js"
import { withExportedSpan } from "@svc/core/observability"

/** How long a started attempt may wait for its callback (SPEC leaves it open). */
export const ATTEMPT_TTL = Duration.minutes(10)
/** How long the console has, after the callback, to redeem the receipt. */
export const RECEIPT_TTL = Duration.minutes(10)

const seconds = (duration: Duration.Duration) => Math.round(Duration.toSeconds(duration))

export interface ConsumedAttempt {
  readonly id: string
  readonly codeVerifier: string
  readonly nonce: string | null
  /** The browser that started it presented its binding cookie. */
  readonly boundToBrowser: boolean
  readonly expired: boolean
}

export interface EnrolledAccount {
  readonly id: string
  readonly principalId: string
  readonly methodId: string
}

export class SignInAttempts extends Effect.Service<SignInAttempts>()("@svc/api/SignInAttempts", {
  effect: Effect.gen(function* () {
    const attempts = yield* SignInAttemptsRepo
    const accounts = yield* AccountsRepo

    const create = (attempt: {
      readonly id: string
      readonly provider: ProviderId
      readonly state: string
      readonly binding: string
      readonly codeVerifier: string
      readonly nonce: string | null
    }): Effect.Effect<void, SqlError> =>
      Effect.zipRight(
        attempts.pruneExpired,
        attempts.insert({
          id: attempt.id,
          provider_id: attempt.provider,
          state_digest: digestOf(attempt.state),
          binding_digest: digestOf(attempt.binding),
          code_verifier: attempt.codeVerifier,
          nonce: attempt.nonce,
          ttl_seconds: seconds(ATTEMPT_TTL)
        })
      ).pipe(withExportedSpan("SignInAttempts.create"))

    /**
     * Consumes the attempt named by a callback's `state`, exactly once: a second callback with
     * the same state (a replayed code) finds nothing. The PKCE verifier is erased as it is returned.
     */
    const consume = (options: {
      readonly provider: ProviderId
      readonly state: string
      readonly binding: string | undefined
    }): Effect.Effect<Option.Option<ConsumedAttempt>, SqlError> =>
      attempts.consume({ provider_id: options.provider, state_digest: digestOf(options.state) }).pipe(
        Effect.map(Option.map((row) => {
          const binding = options.binding
          return {
            id: row.id,
            codeVerifier: row.code_verifier,
            nonce: row.nonce,
            boundToBrowser: binding !== undefined && digestOf(binding).equals(row.binding_digest),
            expired: row.expired
          }
        })),
        withExportedSpan("SignInAttempts.consume")
      )

    /**
     * The enrolled, enabled, unrevoked account with this external identity, if any. Only an
     * administrator enrols identities: nothing is ever created here.
     */
    const findAccountBySubject = (provider: ProviderId, subject: string): Effect.Effect<Option.Option<EnrolledAccount>, SqlError> =>
      accounts.findEnrolledBySubject(provider, subject).pipe(
        Effect.map(Option.map((row) => ({ id: row.id, principalId: row.principal_id, methodId: row.method_id }))),
        withExportedSpan("SignInAttempts.findAccount")
      )

    /** Records the session the callback issued and the digest of its one-use receipt. */
    const complete = (options: { readonly id: string; readonly sessionId: string; readonly receipt: string }) =>
      attempts.complete({
        id: options.id,
        session_id: options.sessionId,
        receipt_digest: digestOf(options.receipt),
        receipt_ttl_seconds: seconds(RECEIPT_TTL)
      }).pipe(withExportedSpan("SignInAttempts.complete"))

    /**
     * Redeems a result receipt once: it must belong to this attempt and provider, be unused and
     * unexpired, and name the session the caller presents. Returns that session's key.
     */
    const redeemReceipt = (options: {
      readonly attemptId: string
      readonly provider: ProviderId
      readonly receipt: string
      readonly sessionId: string
    }): Effect.Effect<Option.Option<string>, SqlError> =>
      attempts.redeem({
        id: options.attemptId,
        provider_id: options.provider,
        receipt_digest: digestOf(options.receipt),
        session_id: options.sessionId
      }).pipe(Effect.map(Option.map((row) => row.session_key)), withExportedSpan("SignInAttempts.redeemReceipt"))

    return { create, consume, findAccountBySubject, complete, redeemReceipt }
  }),
  dependencies: [SignInAttemptsRepo.Default, AccountsRepo.Default]
}) {}
