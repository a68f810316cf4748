import { Context, Effect, Layer, Option, Ref, type Scope } from "effect"
import type { WorkFailure } from "./failure.js"

/** What a handler knows about the attempt it runs. */
export interface HandlerContext {
  readonly id: string
  readonly kind: string
  readonly key: string
  /** 1 for the first attempt. */
  readonly attempt: number
  /** When the item was due (its `next_attempt_at` when claimed). */
  readonly scheduledAt: Date
  /** When this worker claimed it (database time). */
  readonly claimedAt: Date
  readonly deadlineAt: Date
  readonly createdAt: Date
  /** The worker (process) holding the lease. */
  readonly workerId: string
}

/** A handler with its payload decoding and requirements already applied. */
export interface RegisteredHandler {
  readonly kind: string
  readonly run: (payload: unknown, context: HandlerContext) => Effect.Effect<void, WorkFailure>
}

export interface WorkHandlersRegistry {
  /** Adds a handler for the lifetime of the current scope; a second handler for a kind is a defect. */
  readonly register: (handler: RegisteredHandler) => Effect.Effect<void, never, Scope.Scope>
  readonly get: (kind: string) => Effect.Effect<Option.Option<RegisteredHandler>>
  /** The kinds this process can run; workers claim only these. */
  readonly kinds: Effect.Effect<ReadonlyArray<string>>
  /** `kinds`, read from a callback outside any fiber. */
  readonly unsafeKinds: () => ReadonlyArray<string>
}

const make = Effect.gen(function* () {
  const handlers = yield* Ref.make<ReadonlyMap<string, RegisteredHandler>>(new Map())
  let kinds: ReadonlyArray<string> = []
  const update = (f: (current: ReadonlyMap<string, RegisteredHandler>) => Map<string, RegisteredHandler>) =>
    Ref.modify(handlers, (current) => {
      const next = f(current)
      return [next, next] as const
    }).pipe(
      Effect.flatMap((next) =>
        Effect.sync(() => {
          kinds = [...next.keys()].sort()
        })
      )
    )

  const register = (handler: RegisteredHandler) =>
    Effect.gen(function* () {
      const current = yield* Ref.get(handlers)
      if (current.has(handler.kind)) {
        return yield* Effect.dieMessage(`a work handler for kind "${handler.kind}" is already registered`)
      }
      yield* update((map) => new Map(map).set(handler.kind, handler))
      yield* Effect.addFinalizer(() =>
        update((map) => {
          const next = new Map(map)
          if (next.get(handler.kind) === handler) next.delete(handler.kind)
          return next
        })
      )
    }).pipe(Effect.uninterruptible)

  return WorkHandlers.of({
    register,
    get: (kind) => Effect.map(Ref.get(handlers), (map) => Option.fromNullable(map.get(kind))),
    kinds: Effect.sync(() => kinds),
    unsafeKinds: () => kinds
  })
})

/**
 * The handlers of this process, by kind. Provide one `WorkHandlers.layer` to both the handler
 * layers (`WorkHandler.layer`) and `WorkEngine.layer`.
 */
export class WorkHandlers extends Context.Tag("@svc/worker/WorkHandlers")<WorkHandlers, WorkHandlersRegistry>() {
  static readonly layer: Layer.Layer<WorkHandlers> = Layer.effect(WorkHandlers, make)
}
