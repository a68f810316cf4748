/**
 * Installation tokens per session, minted on first use, reused until the credential margin
 * before their expiry, and revoked at close. Process-local: a token minted by another replica
 * or before a restart simply expires upstream within the hour.
 */
import { profilePermissions } from "@svc/core/drivers/repo"
import type { RepositoryProfileName } from "@svc/core/config"
import { CredentialServiceLimits } from "@svc/core/schema"
import { Clock, Context, Data, Effect, Ref, SynchronizedRef } from "effect"
import type { CodeHostClient, InstallationToken, UpstreamError } from "./codeHost.js"

/** The session was closed or ended after its exchange was authenticated: no token for it. */
export class SessionEnded extends Data.TaggedError("SessionEnded")<{}> {}

export interface TokenCache {
  readonly tokenFor: (
    session: { readonly id: string; readonly repositoryId: string; readonly profile: RepositoryProfileName }
  ) => Effect.Effect<string, UpstreamError | SessionEnded>
  /** Revokes what this process holds for the session: how many, and whether every revocation succeeded. */
  readonly revokeFor: (sessionId: string) => Effect.Effect<{ readonly revoked: number; readonly failed: number }>
  /** Revokes every token this process holds, for every session (shutdown). */
  readonly revokeAll: Effect.Effect<{ readonly revoked: number; readonly failed: number }>
}

export class SessionTokens extends Context.Tag("@svc/credential-service/SessionTokens")<SessionTokens, TokenCache>() {}

export const makeTokenCache = (
  client: CodeHostClient,
  /** Called with each minted token's expiry before it is used. */
  onMinted: (sessionId: string, expiresAtMs: number) => Effect.Effect<void>,
  /**
   * Whether the session still has local authority once its token is minted. Asked while the
   * cache is held, so a close either comes first (the token is revoked here) or waits for the
   * token to be cached (its `revokeFor` revokes it).
   */
  isActive: (sessionId: string) => Effect.Effect<boolean> = () => Effect.succeed(true)
) =>
  Effect.gen(function* () {
    const tokens = yield* SynchronizedRef.make(new Map<string, InstallationToken>())
    const retired = yield* Ref.make(new Map<string, Array<string>>())
    const margin = CredentialServiceLimits.credentialMarginSeconds * 1000

    /** Removes and returns the session's replaced tokens. */
    const takeRetired = (sessionId: string) =>
      Ref.modify(retired, (r) => {
        const next = new Map(r)
        next.delete(sessionId)
        return [r.get(sessionId) ?? [], next] as const
      })

    const revokeRetired = (sessionId: string) =>
      Effect.flatMap(
        takeRetired(sessionId),
        // Retired tokens are past their credential margin: a failed revocation only leaves one to expire.
        (old) => Effect.forEach(old, (token) => Effect.ignore(client.revoke(token)), { discard: true })
      )

    /**
     * Process-local correlations are bounded (SPEC 8: twice the session limit): a session closed
     * or expired elsewhere is never told to this process, so to make room the least recently
     * minted session is forgotten and its tokens revoked (a live one mints again on next use).
     */
    const makeRoom = (map: ReadonlyMap<string, InstallationToken>, sessionId: string) => {
      if (map.has(sessionId) || map.size < CredentialServiceLimits.correlatedSessions) return Effect.succeed(map)
      const [oldest, evicted] = map.entries().next().value ?? []
      if (oldest === undefined || evicted === undefined) return Effect.succeed(map)
      const next = new Map(map)
      next.delete(oldest)
      return takeRetired(oldest).pipe(
        Effect.flatMap((old) => Effect.forEach([...old, evicted.token], (token) => Effect.ignore(client.revoke(token)), { discard: true })),
        Effect.as(next)
      )
    }

    /** A token minted for a session closed meanwhile: revoked at once; one that stays live is noted, so cleanup waits for it. */
    const endedWith = (sessionId: string, minted: InstallationToken) =>
      client.revoke(minted.token).pipe(
        Effect.catchAll(() => onMinted(sessionId, minted.expiresAtMs)),
        Effect.zipRight(Effect.fail(new SessionEnded()))
      )

    const tokenFor: TokenCache["tokenFor"] = (session) =>
      SynchronizedRef.modifyEffect(tokens, (map) => Effect.gen(function* () {
        const cached = map.get(session.id)
        if (cached !== undefined && cached.expiresAtMs - margin > (yield* Clock.currentTimeMillis)) return [cached.token, map] as const
        // Two credential slots per session (SPEC 8): the token being replaced stays for exchanges
        // still using it; anything older is revoked before another is minted.
        return yield* Effect.zipRight(revokeRetired(session.id), client.mint(session.repositoryId, profilePermissions[session.profile])).pipe(
          Effect.tap((minted) => Effect.flatMap(isActive(session.id), (active) => active ? Effect.void : endedWith(session.id, minted))),
          Effect.tap((minted) => onMinted(session.id, minted.expiresAtMs)),
          Effect.tap(() =>
            cached === undefined
              ? Effect.void
              : Ref.update(retired, (r) => new Map(r).set(session.id, [...(r.get(session.id) ?? []), cached.token]))
          ),
          Effect.flatMap((minted) => Effect.map(makeRoom(map, session.id), (room) => {
            const next = new Map(room)
            next.delete(session.id)
            return [minted.token, next.set(session.id, minted)] as const
          }))
        )
      }))

    const revokeEach = (all: ReadonlyArray<string>) =>
      Effect.map(Effect.forEach(all, (token) => Effect.either(client.revoke(token))), (results) => {
        const failed = results.filter((r) => r._tag === "Left").length
        return { revoked: results.length - failed, failed }
      })

    const revokeFor = (sessionId: string) =>
      Effect.gen(function* () {
        const current = yield* SynchronizedRef.modify(tokens, (map) => {
          const next = new Map(map)
          next.delete(sessionId)
          return [map.get(sessionId), next] as const
        })
        const old = yield* takeRetired(sessionId)
        return yield* revokeEach([...old, ...(current === undefined ? [] : [current.token])])
      })

    const revokeAll = Effect.gen(function* () {
      const current = yield* SynchronizedRef.getAndSet(tokens, new Map())
      const old = yield* Ref.getAndSet(retired, new Map())
      return yield* revokeEach([...[...old.values()].flat(), ...[...current.values()].map((t) => t.token)])
    })

    return { tokenFor, revokeFor, revokeAll } satisfies TokenCache
  })

/**
 * SPEC 8 "shutdown cleanup 60 s": when the process stops, the tokens it holds are revoked (no
 * other process can: they are process-local), for at most 60 s; what is left then expires upstream.
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
