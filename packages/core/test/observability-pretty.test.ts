/**
 * The readable log lines of a development terminal: exact layout, colours only when asked, the
 * same secret scrubbing as the JSON lines, and the choice between the two formats.
 */
import { describe, expect, it } from "@effect/vitest"
import { currentKnownSecrets, prettyLineLogger, REDACTED, selectLogFormat } from "@svc/core/observability"
import { Cause, FiberId, FiberRefs, HashMap, List, LogLevel, Option } from "effect"

const AT = new Date("2026-11-23T19:15:11.123Z")
const SECRET = "generated-auth-secret-0123456789"

const line = (
  message: unknown,
  options: {
    readonly level?: LogLevel.LogLevel
    readonly annotations?: Record<string, unknown>
    readonly cause?: Cause.Cause<unknown>
    readonly colors?: boolean
  } = {}
) => {
  const fiberId = FiberId.unsafeMake()
  const context = FiberRefs.updateAs(FiberRefs.empty(), { fiberId, fiberRef: currentKnownSecrets, value: [SECRET] })
  return prettyLineLogger({ colors: options.colors ?? false }).log({
    fiberId,
    logLevel: options.level ?? LogLevel.Info,
    message,
    cause: options.cause ?? Cause.empty,
    context,
    spans: List.empty(),
    annotations: HashMap.fromIterable(Object.entries(options.annotations ?? {})),
    date: AT
  })
}

describe("pretty log lines", () => {
  it("time, level, message and annotations as key=value; no fiber id, spans or trace ids", () => {
    expect(line("svc is ready at http://127.0.0.1:8080", { annotations: { url: "http://127.0.0.1:8080" } })).toBe(
      "19:15:11.123 INFO  svc is ready at http://127.0.0.1:8080 url=http://127.0.0.1:8080"
    )
    expect(line("http request", { annotations: { requestId: "req_3f1c", method: "GET", status: 404 } })).toBe(
      "19:15:11.123 INFO  http request requestId=req_3f1c method=GET status=404"
    )
    expect(line("bootstrap failed: it exists", { level: LogLevel.Error, annotations: { reason: "exists", detail: "two words" } })).toBe(
      '19:15:11.123 ERROR bootstrap failed: it exists detail="two words" reason=exists'
    )
    expect(line(["work engine started", { concurrency: 4 }], { level: LogLevel.Warning })).toBe(
      '19:15:11.123 WARN  work engine started {"concurrency":4}'
    )
  })

  it("colours the level (and dims the rest) only when asked", () => {
    expect(line("ready", { colors: true, annotations: { code: "OK" } })).toBe(
      "\u001b[2m19:15:11.123\u001b[0m \u001b[32mINFO \u001b[0m ready \u001b[2mcode=OK\u001b[0m"
    )
    expect(line("failed", { colors: true, level: LogLevel.Error })).toBe("\u001b[2m19:15:11.123\u001b[0m \u001b[31mERROR\u001b[0m failed")
  })

  it("scrubs secrets like the JSON logger: known values, secret-looking keys, URL credentials, causes", () => {
    expect(line(`auth secret is ${SECRET}`, { annotations: { password: "hunter2-hunter2", databaseUrl: "postgres://svc:pw-1234567@db/svc" } })).toBe(
      `19:15:11.123 INFO  auth secret is ${REDACTED} databaseUrl=postgres://svc:${REDACTED}@db/svc password=${REDACTED}`
    )
    const withCause = line("sign-in failed", { level: LogLevel.Error, cause: Cause.fail(new Error(`rejected ${SECRET}`)) })
    expect(withCause.split("\n")[0]).toBe("19:15:11.123 ERROR sign-in failed")
    expect(withCause.split("\n")[1]).toBe(`    Error: rejected ${REDACTED}`)
    expect(withCause).not.toContain(SECRET)
  })
})

describe("which format a process logs in", () => {
  const tty = { isTTY: true, noColor: false }
  const pipe = { isTTY: false, noColor: false }
  it("pretty on a development terminal, JSON lines in a pipe and in production", () => {
    expect(selectLogFormat(Option.none(), "development", tty)).toEqual({ _tag: "pretty", colors: true })
    expect(selectLogFormat(Option.none(), "development", { isTTY: true, noColor: true })).toEqual({ _tag: "pretty", colors: false })
    expect(selectLogFormat(Option.none(), "development", pipe)).toEqual({ _tag: "json" })
    expect(selectLogFormat(Option.none(), "production", tty)).toEqual({ _tag: "json" })
  })

  it("SVC_LOG_FORMAT wins over both defaults", () => {
    expect(selectLogFormat(Option.some("json"), "development", tty)).toEqual({ _tag: "json" })
    expect(selectLogFormat(Option.some("pretty"), "development", pipe)).toEqual({ _tag: "pretty", colors: false })
    expect(selectLogFormat(Option.some("pretty"), "production", pipe)).toEqual({ _tag: "pretty", colors: false })
  })
})
