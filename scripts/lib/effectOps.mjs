// Effect instructions per request of a server in this process (bench-auth BENCH_COUNT_OPS=1).
/**
 * Counts what the effect fiber runtime executes per request: each instruction handler of its
 * prototype (the same module instance the server runs: resolved by file, not re-bundled), each
 * fiber-ref write, fiber start and native span end, over `n` sequential requests.
 */
export const countOps = async (port, headers, n = 500) => {
  const internal = (file) => import(new URL(`../../node_modules/effect/dist/esm/internal/${file}`, import.meta.url))
  const { FiberRuntime } = await internal("fiberRuntime.js")
  const { NativeSpan } = await internal("tracer.js")
  const counts = { instructions: 0, fiberRefWrites: 0, fibers: 0, spans: 0, stackCaptures: 0 }
  const wrapped = []
  const wrap = (proto, name, key) => {
    const original = proto[name]
    if (typeof original !== "function") return
    proto[name] = function (...args) { counts[key]++; return original.apply(this, args) }
    wrapped.push(() => { proto[name] = original })
  }
  for (const op of ["Tag", "Left", "None", "Right", "Some", "Sync", "Success", "Failure", "WithRuntime", "UpdateRuntimeFlags",
    "OnSuccess", "OnStep", "OnFailure", "OnSuccessAndFailure", "Async", "Yield", "While", "Iterator", "Commit"]) wrap(FiberRuntime.prototype, op, "instructions")
  wrap(FiberRuntime.prototype, "setFiberRef", "fiberRefWrites")
  wrap(FiberRuntime.prototype, "start", "fibers")
  wrap(NativeSpan.prototype, "end", "spans")
  // Stack captures: every \`new Error()\` (Effect.fn and spans take their call sites that way)
  // and Error.captureStackTrace, counted through a stand-in global Error for the duration.
  const OriginalError = globalThis.Error
  const CountingError = function (...args) { counts.stackCaptures++; return Reflect.construct(OriginalError, args, new.target ?? CountingError) }
  Object.setPrototypeOf(CountingError, OriginalError)
  CountingError.prototype = OriginalError.prototype
  Object.defineProperty(CountingError, "stackTraceLimit", { get: () => OriginalError.stackTraceLimit, set: (v) => { OriginalError.stackTraceLimit = v } })
  const captureStackTrace = OriginalError.captureStackTrace
  CountingError.captureStackTrace = (...args) => { counts.stackCaptures++; return captureStackTrace(...args) }
  globalThis.Error = CountingError
  wrapped.push(() => { globalThis.Error = OriginalError })
  try {
    for (let i = 0; i < n; i++) {
      const response = await fetch(`http://127.0.0.1:${port}/installation`, { headers })
      await response.arrayBuffer()
      if (response.status !== 200) throw new Error(`expected 200, got ${response.status}`)
    }
  } finally {
    for (const restore of wrapped) restore()
  }
  return Object.fromEntries(Object.entries(counts).map(([key, value]) => [key, value / n]))
}

