/**
 * The repository options' description cache (SPEC 4.4, 8; DESIGN §12). Descriptions come from
 * the code host through the Repo Driver; each is kept five minutes. A request waits a short
 * while for the descriptions it names; what is still being fetched then is reported as
 * `descriptionsPending` and lands in the cache for the next request. One fetch per reference
 * at a time: concurrent requests wait on the same fetch. Failures are not cached.
 */
import type { ControlUnavailable, RepoDriverShape } from "@svc/core/drivers/repo"
import { RepositoryOptionsUnavailable } from "@svc/core/errors"
import { Limits } from "@svc/core/schema"
import { Cause, Clock, Deferred, Duration, Effect, Exit, Option, SynchronizedRef } from "effect"

/** How long a request waits for descriptions before answering with `descriptionsPending`. */
export const DESCRIPTION_WAIT = Duration.millis(1500)
const TTL_MS = Limits.repositoryOptionsCacheSeconds * 1000

type Entry =
  | { readonly _tag: "Known"; readonly description: string | undefined; readonly expiresAtMs: number }
  | { readonly _tag: "Fetching"; readonly done: Deferred.Deferred<void, ControlUnavailable> }

export interface DescriptionLookup {
  /** The known descriptions of `refs` (a reference without one maps to undefined). */
  readonly descriptions: ReadonlyMap<string, string | undefined>
  readonly pending: boolean
}

export const makeDescriptionCache = (describe: RepoDriverShape["describe"]) =>
  Effect.gen(function* () {
    const scope = yield* Effect.scope
    const entries = yield* SynchronizedRef.make(new Map<string, Entry>())

    const settle = (refs: ReadonlyArray<string>, done: Deferred.Deferred<void, ControlUnavailable>) =>
      describe(refs).pipe(
        Effect.exit,
        Effect.flatMap((exit) =>
          Effect.gen(function* () {
            const at = yield* Clock.currentTimeMillis
            yield* SynchronizedRef.update(entries, (map) => {
              const next = new Map(map)
              for (const ref of refs) {
                const entry = next.get(ref)
                if (entry?._tag !== "Fetching" || entry.done !== done) continue
                if (Exit.isSuccess(exit)) next.set(ref, { _tag: "Known", description: exit.value.get(ref), expiresAtMs: at + TTL_MS })
                else next.delete(ref)
              }
              return next
            })
            if (Exit.isFailure(exit)) {
              const reason = Cause.failureOption(exit.cause).pipe(Option.map((e) => e.reason), Option.getOrElse(() => "interrupted or defect"))
              yield* Effect.logWarning("repository descriptions unavailable").pipe(Effect.annotateLogs({ reason }))
            }
            yield* Deferred.done(done, Exit.asVoid(exit))
          })
        )
      )

    const lookup = (refs: ReadonlyArray<string>): Effect.Effect<DescriptionLookup, RepositoryOptionsUnavailable> =>
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        const fresh = yield* Deferred.make<void, ControlUnavailable>()
        const { missing, waits } = yield* SynchronizedRef.modify(entries, (map) => {
          const next = new Map(map)
          const waits = new Set<Deferred.Deferred<void, ControlUnavailable>>()
          const missing: Array<string> = []
          for (const ref of refs) {
            const entry = map.get(ref)
            if (entry?._tag === "Known" && entry.expiresAtMs > now) continue
            if (entry?._tag === "Fetching") {
              waits.add(entry.done)
              continue
            }
            missing.push(ref)
            next.set(ref, { _tag: "Fetching", done: fresh })
          }
          if (missing.length > 0) waits.add(fresh)
          return [{ missing, waits: [...waits] }, next] as const
        })
        if (missing.length > 0) yield* Effect.forkIn(settle(missing, fresh), scope)
        const waited = yield* Effect.forEach(waits, Deferred.await, { discard: true }).pipe(
          Effect.timeoutOption(DESCRIPTION_WAIT),
          Effect.mapError(() => new RepositoryOptionsUnavailable({ message: "Repository descriptions are unavailable; try again later." }))
        )
        const map = yield* SynchronizedRef.get(entries)
        return {
          descriptions: new Map(refs.flatMap((ref) => {
            const entry = map.get(ref)
            return entry?._tag === "Known" ? [[ref, entry.description] as const] : []
          })),
          pending: Option.isNone(waited)
        }
      })

    return { lookup }
  })
