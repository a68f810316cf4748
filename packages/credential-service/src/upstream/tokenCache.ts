/**
 * Installation tokens per session, minted on first use, reused until the credential margin
 * before their expiry, and revoked at close. The tokens are process-local (only their holder can
 * revoke them), but every one is recorded in the session store under an id of its own before it
 * is used, and marked there when revoked: whichever replica closes a session can tell whether
 * another still holds a live token for it. A close reaches only the replica it is sent to, so
 * every replica also looks, every few seconds, for sessions it holds tokens of that have ended
 * elsewhere (closed, or past their deadline), and revokes those tokens
 * (docs/decisions/repository-credentials.md).
 */
import { profilePermissions } from "@svc/core/drivers/repo"
import type { RepositoryProfileName } from "@svc/core/config"
import { CredentialServiceLimits } from "@svc/core/schema"
import { Clock, Context, Data, Duration, Effect, Ref, Schedule, SynchronizedRef } from "effect"
import type { CodeHostClient, UpstreamError } from "./codeHost.js"

/** The session was closed or ended after its exchange was authenticated: no token for it. */
export class SessionEnded extends Data.TaggedError("SessionEnded")<{}> {}

export interface TokenCache {
  /** The session's token, after reading from the store that the session is still active. */
  readonly tokenFor: (
    session: { readonly id: string; readonly repositoryId: string; readonly profile: RepositoryProfileName }
  ) => Effect.Effect<string, UpstreamError | SessionEnded>
  /**
   * Revokes what this process holds for the session and, when it held tokens, settles the session's
   * cleanup if it has ended and nothing else is outstanding: how many, and how many failed.
   */
  readonly revokeFor: (sessionId: string) => Effect.Effect<{ readonly revoked: number; readonly failed: number }>
  /** Revokes every token this process holds, for every session (shutdown). */
  readonly revokeAll: Effect.Effect<{ readonly revoked: number; readonly failed: number }>
  /**
   * Revokes what this process holds for sessions that are no longer active (closed on another
   * replica, or past their deadline), settling each as `revokeFor` does.
   */
  readonly revokeEnded: Effect.Effect<{ readonly sessions: number; readonly revoked: number; readonly failed: number }>
}

export class SessionTokens extends Context.Tag("@svc/credential-service/SessionTokens")<SessionTokens, TokenCache>() {}

/** Where minted tokens are accounted for: `RepositorySessionsRepo` in the process. */
export interface TokenLedger {
  /** Records a minted token (its id and expiry, never the token) before it is used. */
  readonly noteToken: (sessionId: string, tokenId: string, expiresAtMs: number) => Effect.Effect<void>
  readonly tokensRevoked: (tokenIds: ReadonlyArray<string>) => Effect.Effect<void>
  /** Whether the session still has local authority (not closed, disposed or past its deadline). */
  readonly isActive: (sessionId: string) => Effect.Effect<boolean>
  /** Those of `sessionIds` that still have local authority, in one read. */
  readonly activeAmong: (sessionIds: ReadonlyArray<string>) => Effect.Effect<ReadonlySet<string>>
  /** Settles an ended session none of whose recorded tokens can still be live. */
  readonly settleTokens: (sessionId: string) => Effect.Effect<void>
}

interface HeldToken {
  readonly id: string
  readonly token: string
  readonly expiresAtMs: number
}

/** A token handed out: `checked` when its session was read active after it was minted. */
interface Handed {
  readonly token: string
  readonly checked: boolean
}

type Held = Map<string, HeldToken>

interface Revocation {
  readonly revoked: number
  readonly failed: number
}

export const makeTokenCache = (client: CodeHostClient, ledger: TokenLedger) =>
  Effect.gen(function* () {
    const tokens = yield* SynchronizedRef.make(new Map<string, HeldToken>())
    const retired = yield* Ref.make(new Map<string, Array<HeldToken>>())
    const margin = CredentialServiceLimits.credentialMarginSeconds * 1000

    /** Removes and returns the session's replaced tokens. */
    const takeRetired = (sessionId: string) =>
      Ref.modify(retired, (r) => {
        const next = new Map(r)
        next.delete(sessionId)
        return [r.get(sessionId) ?? [], next] as const
      })

    /**
     * Revokes held tokens and records the ones revoked; a failed revocation stays outstanding in
     * the store until its expiry. Then each session that had tokens is settled if it has ended.
     */
    const revokeHeld = (held: ReadonlyArray<readonly [string, HeldToken]>) =>
      Effect.gen(function* () {
        const results = yield* Effect.forEach(held, ([, t]) => Effect.either(Effect.as(client.revoke(t.token), t.id)))
        const revoked = results.flatMap((r) => (r._tag === "Right" ? [r.right] : []))
        yield* ledger.tokensRevoked(revoked)
        yield* Effect.forEach(new Set(held.map(([sessionId]) => sessionId)), ledger.settleTokens, { discard: true })
        return { revoked: revoked.length, failed: results.length - revoked.length } satisfies Revocation
      })

    const ofSession = (sessionId: string, held: ReadonlyArray<HeldToken>) => held.map((t) => [sessionId, t] as const)

    // Retired tokens are past their credential margin: a failed revocation only leaves one to expire.
    const revokeRetired = (sessionId: string) =>
      Effect.flatMap(takeRetired(sessionId), (old) => revokeHeld(ofSession(sessionId, old)))

    /**
     * Process-local correlations are bounded (SPEC 8: twice the session limit): a session closed
     * or expired elsewhere is found only by the next `revokeEnded`, so to make room the least
     * recently minted session is forgotten and its tokens revoked (a live one mints again on next use).
     */
    const makeRoom = (map: ReadonlyMap<string, HeldToken>, sessionId: string) => {
      if (map.has(sessionId) || map.size < CredentialServiceLimits.correlatedSessions) return Effect.succeed(map)
      const [oldest, evicted] = map.entries().next().value ?? []
      if (oldest === undefined || evicted === undefined) return Effect.succeed(map)
      const next = new Map(map)
      next.delete(oldest)
      return takeRetired(oldest).pipe(
        Effect.flatMap((old) => revokeHeld(ofSession(oldest, [...old, evicted]))),
        Effect.as(next)
      )
    }

    /** A token minted for a session closed meanwhile: revoked at once (it stays recorded if that fails). */
    const endedWith = (sessionId: string, minted: HeldToken) =>
      Effect.zipRight(revokeHeld([[sessionId, minted]]), Effect.fail(new SessionEnded()))

    /** The cached token, or a new one whose session was read active after it was minted (`checked`). */
    const current = (session: Parameters<TokenCache["tokenFor"]>[0]) =>
      SynchronizedRef.modifyEffect(tokens, (map) => Effect.gen(function* (): Effect.fn.Return<readonly [Handed, Held], UpstreamError | SessionEnded> {
        const cached = map.get(session.id)
        if (cached !== undefined && cached.expiresAtMs - margin > (yield* Clock.currentTimeMillis)) {
          return [{ token: cached.token, checked: false }, map] as const
        }
        // Two credential slots per session (SPEC 8): the token being replaced stays for exchanges
        // still using it; anything older is revoked before another is minted.
        const fresh = yield* Effect.zipRight(revokeRetired(session.id), client.mint(session.repositoryId, profilePermissions[session.profile]))
        const minted: HeldToken = { id: `rst_${crypto.randomUUID()}`, ...fresh }
        // Unrecorded, no replica could account for it: a token that cannot be recorded is not used.
        yield* ledger.noteToken(session.id, minted.id, minted.expiresAtMs).pipe(
          Effect.onError(() => Effect.ignore(client.revoke(minted.token)))
        )
        // Asked while the cache is held, so a close on this replica either comes first (the token
        // is revoked here) or waits for the token to be cached (its `revokeFor` revokes it).
        if (!(yield* ledger.isActive(session.id))) return yield* endedWith(session.id, minted)
        if (cached !== undefined) yield* Ref.update(retired, (r) => new Map(r).set(session.id, [...(r.get(session.id) ?? []), cached]))
        const next = new Map(yield* makeRoom(map, session.id))
        next.delete(session.id)
        return [{ token: minted.token, checked: true }, next.set(session.id, minted)] as const
      }))

    /**
     * A cached token is handed out only after the session is read active again, outside the cache
     * lock: a close on another replica never reaches this cache, and an exchange authenticated
     * before it must not go on with the token held here. What this process holds for a session
     * found ended is revoked there and then.
     */
    const tokenFor: TokenCache["tokenFor"] = (session) =>
      Effect.flatMap(current(session), ({ token, checked }) =>
        checked
          ? Effect.succeed(token)
          : Effect.flatMap(ledger.isActive(session.id), (active) =>
            active ? Effect.succeed(token) : Effect.zipRight(revokeFor(session.id), Effect.fail(new SessionEnded()))
          ))

    const revokeFor = (sessionId: string) =>
      Effect.gen(function* () {
        const held = yield* SynchronizedRef.modify(tokens, (map) => {
          const next = new Map(map)
          next.delete(sessionId)
          return [map.get(sessionId), next] as const
        })
        const old = yield* takeRetired(sessionId)
        const all = ofSession(sessionId, [...old, ...(held === undefined ? [] : [held])])
        return all.length === 0 ? { revoked: 0, failed: 0 } : yield* revokeHeld(all)
      })

    const revokeAll = Effect.gen(function* () {
      const held = yield* SynchronizedRef.getAndSet(tokens, new Map())
      const old = yield* Ref.getAndSet(retired, new Map())
      return yield* revokeHeld([
        ...[...old].flatMap(([sessionId, list]) => ofSession(sessionId, list)),
        ...[...held].map(([sessionId, t]) => [sessionId, t] as const)
      ])
    })

    const revokeEnded = Effect.gen(function* () {
      const held = new Set([...(yield* SynchronizedRef.get(tokens)).keys(), ...(yield* Ref.get(retired)).keys()])
      if (held.size === 0) return { sessions: 0, revoked: 0, failed: 0 }
      const active = yield* ledger.activeAmong([...held])
      const ended = [...held].filter((sessionId) => !active.has(sessionId))
      const results = yield* Effect.forEach(ended, revokeFor)
      return {
        sessions: ended.length,
        revoked: results.reduce((n, r) => n + r.revoked, 0),
        failed: results.reduce((n, r) => n + r.failed, 0)
      }
    })

    return { tokenFor, revokeFor, revokeAll, revokeEnded } satisfies TokenCache
  })

/**
 * How often a replica looks for sessions that ended elsewhere while it holds their tokens. Without
 * it an idle holder kept a closed session's token valid upstream, and the session pending cleanup
 * (counting against the limit of 16), until the token expired, up to an hour later.
 */
export const ENDED_SESSIONS_CHECK: Duration.Duration = Duration.seconds(5)

/** Runs `revokeEnded` every `interval` for as long as it runs (fork it in the cache's scope). */
export const revokeEndedSessions = (cache: TokenCache, interval: Duration.Duration = ENDED_SESSIONS_CHECK) =>
  cache.revokeEnded.pipe(
    Effect.tap(({ sessions, revoked, failed }) =>
      sessions === 0
        ? Effect.void
        : Effect.logInfo("tokens of sessions ended on another replica or past their deadline revoked").pipe(
          Effect.annotateLogs({ sessions, revoked, failed })
        )
    ),
    // A lost database is tried again at the next interval; the tokens stay held until then.
    Effect.catchAllCause((cause) => Effect.logWarning("could not check the sessions whose tokens this replica holds", cause)),
    Effect.repeat(Schedule.spaced(interval)),
    Effect.asVoid
  )

/**
 * SPEC 8 "shutdown cleanup 60 s": when the process stops, the tokens it holds are revoked (no
 * other process can: they are process-local), for at most 60 s; what is left then expires upstream
 * (and stays outstanding in the store until then).
 */
export const revokeAtShutdown = (cache: TokenCache) =>
  cache.revokeAll.pipe(
    Effect.timeout(`${CredentialServiceLimits.shutdownCleanupSeconds} seconds`),
    Effect.matchEffect({
      onSuccess: ({ revoked, failed }) =>
        (failed === 0 ? Effect.logInfo("shutdown cleanup: tokens revoked") : Effect.logWarning("shutdown cleanup: some revocations failed"))
          .pipe(Effect.annotateLogs({ revoked, failed })),
      onFailure: () => Effect.logWarning(`shutdown cleanup: cut off after ${CredentialServiceLimits.shutdownCleanupSeconds} s`)
    })
  )
