/**
 * Spans only when they leave the process (docs/decisions/performance.md, "Session 21"). Without
 * `OTEL_EXPORTER_OTLP_ENDPOINT` the tracer is Effect's native one, whose spans reach no one, yet
 * each `Effect.withSpan` still cost about 18 µs on this machine (a span object, its ids, a scoped
 * context and an exit hook) and each `Effect.fn` call a stack capture besides: without the three
 * spans and the capture, an authenticated request took about a quarter less CPU. With an exporter,
 * every span is made exactly as `Effect.withSpan` and `Effect.fn` make it.
 */
import { Context, DefaultServices, Effect, Option, Tracer } from "effect"
import { dual } from "effect/Function"
import { isGeneratorFunction } from "effect/Utils"

/** Effect's own tracer, in place when no exporter is configured. */
const nativeTracer = Context.get(DefaultServices.liveServices, Tracer.Tracer)

/** Whether the current tracer exports spans (a tracer other than Effect's native one). */
export const spansExported: Effect.Effect<boolean> = Effect.map(Effect.tracer, (tracer) => tracer !== nativeTracer)

/** `Effect.withSpan` when spans are exported (no stack capture unless asked); `self` otherwise. */
export const withExportedSpan: {
  (name: string, options?: Tracer.SpanOptions): <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  <A, E, R>(self: Effect.Effect<A, E, R>, name: string, options?: Tracer.SpanOptions): Effect.Effect<A, E, R>
} = dual(
  (args) => Effect.isEffect(args[0]),
  <A, E, R>(self: Effect.Effect<A, E, R>, name: string, options?: Tracer.SpanOptions): Effect.Effect<A, E, R> =>
    Effect.flatMap(Effect.tracer, (tracer) =>
      tracer === nativeTracer ? self : Effect.withSpan(self, name, { captureStackTrace: false, ...options })
    )
)

type Body = (...args: Array<unknown>) => unknown
type Pipeable = (effect: Effect.Effect<unknown, unknown, unknown>, ...args: Array<unknown>) => Effect.Effect<unknown, unknown, unknown>

/**
 * `Effect.fn(name)` with the span made only when spans are exported (`withExportedSpan`), and no
 * call-site stack captured on each call. The same shapes: a generator body or a body returning an
 * effect, then pipeable steps that see the call's arguments; the span covers them all.
 */
export const exportedFn = (name: string, options?: Tracer.SpanOptions): Effect.fn.Gen & Effect.fn.NonGen =>
  ((body: Body, ...pipeables: Array<Pipeable>) =>
    function (this: unknown, ...args: Array<unknown>) {
      const effect = isGeneratorFunction(body)
        ? Effect.gen(() => body.apply(this, args) as Generator<never, unknown, never>)
        : Effect.suspend(() => body.apply(this, args) as Effect.Effect<unknown, unknown, unknown>)
      return withExportedSpan(pipeables.reduce((piped, step) => step(piped, ...args), effect), name, options)
    }) as unknown as Effect.fn.Gen & Effect.fn.NonGen

/** `Effect.annotateCurrentSpan` when spans are exported: no failure built for a missing span otherwise. */
export const annotateExportedSpan = (values: Record<string, unknown>): Effect.Effect<void> =>
  Effect.flatMap(Effect.tracer, (tracer) => tracer === nativeTracer ? Effect.void : Effect.annotateCurrentSpan(values))

/**
 * The request's span when the platform makes none (spans not exported; http/pipeline.ts): a
 * native span made directly, without a span's scope and exit hook. The router writes the matched
 * route on it (the HTTP metrics' `route` label), annotations land on it, and log lines carry its
 * ids, as with the platform's span; it reaches no one, so it is not ended. `undefined` when spans
 * are exported: the platform's own request span is current then.
 */
export const bareRequestSpan = (method: string): Effect.Effect<Tracer.Span | undefined> =>
  Effect.map(Effect.tracer, (tracer) =>
    tracer === nativeTracer
      ? tracer.span(`http.server ${method}`, Option.none(), Context.empty(), [], BigInt(Date.now()) * 1_000_000n, "server")
      : undefined
  )
