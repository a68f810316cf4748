import { Effect, Layer, Schema } from "effect"
import { WorkCodes, WorkFailure, WorkMessages } from "./failure.js"
import { type HandlerContext, WorkHandlers } from "./handlers.js"

/**
 * Registers the handler of one kind of work. A handler is an idempotent reconciler: it converges
 * the world to the state recorded in the database, so running it again after a crash at any
 * point is safe. It fails with `WorkFailure` (safe code and message); a defect is recorded as
 * `INTERNAL_ERROR` with a fixed message and the cause is logged.
 *
 * A payload that does not decode fails the item permanently with `INVALID_PAYLOAD`.
 */
export const layer = <A, I, RS, R>(
  kind: string,
  payload: Schema.Schema<A, I, RS>,
  handle: (payload: A, context: HandlerContext) => Effect.Effect<void, WorkFailure, R>
): Layer.Layer<never, never, WorkHandlers | RS | R> =>
  Layer.scopedDiscard(
    Effect.gen(function* () {
      const registry = yield* WorkHandlers
      const context = yield* Effect.context<RS | R>()
      const decode = Schema.decodeUnknown(payload)
      yield* registry.register({
        kind,
        run: (raw, attempt) =>
          decode(raw).pipe(
            Effect.tapError((error) =>
              Effect.logWarning("work item payload does not decode", { kind, id: attempt.id, issue: error.message })
            ),
            Effect.mapError(
              () =>
                new WorkFailure({
                  code: WorkCodes.INVALID_PAYLOAD,
                  message: WorkMessages.INVALID_PAYLOAD,
                  permanent: true
                })
            ),
            Effect.flatMap((decoded) => handle(decoded, attempt)),
            Effect.provide(context)
          )
      })
    })
  )
