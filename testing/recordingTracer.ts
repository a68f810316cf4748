/** A tracer for tests that keeps the spans it makes; any tracer but the native one counts as exporting. */
import { Option, Tracer } from "effect"

export interface Recorded {
  readonly name: string
  readonly parent: string | undefined
  readonly attributes: Map<string, unknown>
}

/** A tracer that keeps every span it makes: a tracer other than the native one, as OTLP's is. */
export const recordingTracer = () => {
  const spans: Array<Recorded> = []
  const tracer = Tracer.make({
    span: (name, parent, context, links, startTime, kind) => {
      const span: Tracer.Span = {
        _tag: "Span",
        name,
        spanId: `span-${spans.length}`,
        traceId: "trace",
        parent,
        context,
        status: { _tag: "Started", startTime },
        attributes: new Map(),
        links,
        sampled: true,
        kind,
        end: () => undefined,
        attribute: (key, value) => void (span.attributes as Map<string, unknown>).set(key, value),
        event: () => undefined,
        addLinks: () => undefined
      }
      spans.push({
        name,
        parent: Option.match(parent, { onNone: () => undefined, onSome: (p) => p._tag === "Span" ? p.name : undefined }),
        attributes: span.attributes as Map<string, unknown>
      })
      return span
    },
    context: (f) => f()
  })
  return { tracer, spans }
}
