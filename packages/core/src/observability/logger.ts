/**
 * Structured logs: one JSON object per line on stdout, scrubbed of secrets (see `scrub.ts`).
 *
 * `{"timestamp","level","message","annotations":{requestId,...},"spans":{label: ms},
 *   "traceId"?,"spanId"?,"cause"?,"fiberId"}`
 */
import { Array as Arr, Cause, Context, FiberId, FiberRef, FiberRefs, HashMap, Layer, List, Logger, LogLevel, Option, Tracer } from "effect"
import type { LogFormat } from "./logFormat.js"
import { prettyLogger } from "./prettyLogger.js"
import { currentKnownSecrets, maskText, scrub } from "./scrub.js"

export interface LogRecord {
  readonly timestamp: string
  readonly level: string
  readonly message: unknown
  readonly annotations: Record<string, unknown>
  readonly spans: Record<string, number>
  readonly traceId?: string
  readonly spanId?: string
  readonly cause?: string
  readonly fiberId: string
}

/** Formats one log call as a scrubbed JSON line (without the trailing newline). */
export const jsonLineLogger: Logger.Logger<unknown, string> = Logger.make(
  ({ annotations, cause, context, date, fiberId, logLevel, message, spans }) => {
    const secrets = FiberRefs.getOrDefault(context, currentKnownSecrets)
    const now = date.getTime()
    const annotationRecord: Record<string, unknown> = {}
    for (const [key, value] of HashMap.toEntries(annotations)) annotationRecord[key] = value
    const spanRecord: Record<string, number> = {}
    for (const span of List.toArray(spans)) spanRecord[span.label] = now - span.startTime
    const messages = Arr.ensure(message)
    const span = Context.getOption(FiberRefs.getOrDefault(context, FiberRef.currentContext), Tracer.ParentSpan)
    const record: LogRecord = {
      timestamp: date.toISOString(),
      level: logLevel.label,
      message: scrub(messages.length === 1 ? messages[0] : messages, secrets),
      annotations: scrub(annotationRecord, secrets) as Record<string, unknown>,
      spans: spanRecord,
      ...(Option.isSome(span) ? { traceId: span.value.traceId, spanId: span.value.spanId } : {}),
      ...(Cause.isEmpty(cause) ? {} : { cause: maskText(Cause.pretty(cause, { renderErrorCause: true }), secrets) }),
      fiberId: FiberId.threadName(fiberId)
    }
    return JSON.stringify(record)
  }
)

/** The JSON logger, written with the fiber's `Console` (stdout by default). */
export const jsonLogger: Logger.Logger<unknown, void> = Logger.withConsoleLog(jsonLineLogger)

/** Replaces Effect's default logger (JSON unless told otherwise) and sets the minimum level. */
export const loggerLayer = (minimumLevel: LogLevel.LogLevel, format: LogFormat = { _tag: "json" }): Layer.Layer<never> =>
  Layer.merge(
    Logger.replace(Logger.defaultLogger, format._tag === "json" ? jsonLogger : prettyLogger({ colors: format.colors })),
    Logger.minimumLogLevel(minimumLevel)
  )
