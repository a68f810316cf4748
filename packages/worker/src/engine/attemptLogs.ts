import { Effect, FiberRef, FiberRefs, HashMap, HashSet, Logger } from "effect"
import type { ClaimedItem } from "./leases.js"

/**
 * The log annotations of an attempt (`workId`, `workKind`, `workAttempt`), added when a line is
 * logged instead of when the attempt starts. Setting `FiberRef.currentLogAnnotations` to a new
 * `HashMap` per attempt (what `Effect.annotateLogs` does) hashes the map to compare it with the
 * old one, and caching that hash (`Object.defineProperty` on every new map) was about an eighth of
 * the engine's busy time per item (issue 11). The attempt now only sets `currentAttempt`, a plain
 * value compared by identity, and the runner's loggers add its fields to the lines that are
 * actually logged; the lines look as before.
 */
const currentAttempt = FiberRef.unsafeMake<ClaimedItem | null>(null)

const withAttemptAnnotations = <M, O>(logger: Logger.Logger<M, O>): Logger.Logger<M, O> =>
  Logger.mapInputOptions(logger, (options: Logger.Logger.Options<M>) => {
    const item = FiberRefs.getOrDefault(options.context, currentAttempt)
    if (item === null) return options
    const annotations = HashMap.set(
      HashMap.set(HashMap.set(options.annotations, "workId", item.id), "workKind", item.kind),
      "workAttempt",
      item.attempt
    )
    return { ...options, annotations }
  })

/** Runs a slot's runner with loggers that annotate each line with the current attempt, if any. */
export const withAttemptLogs = <A, E, R>(runner: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.locallyWith(runner, FiberRef.currentLoggers, HashSet.map(withAttemptAnnotations))

/**
 * Runs an attempt as the runner's current one, for its log lines (and those of fibers it forks).
 * Not restored if the attempt is interrupted: the runner fiber ends with it.
 */
export const asCurrentAttempt = <A, E, R>(item: ClaimedItem, attempt: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.zipRight(FiberRef.set(currentAttempt, item), Effect.zipLeft(attempt, FiberRef.set(currentAttempt, null)))

/** The same annotations as a record, for lines logged outside the runner (settling an attempt). */
export const attemptAnnotations = (item: ClaimedItem) => ({
  workId: item.id,
  workKind: item.kind,
  workAttempt: item.attempt
})
