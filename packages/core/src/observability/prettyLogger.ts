/**
 * Human-readable log lines for a developer's terminal (`npm start` on a TTY):
 *
 *   `19:15:11.123 INFO  svc is ready at http://127.0.0.1:8080 url=http://127.0.0.1:8080`
 *
 * UTC time of day, the level (coloured when asked), the message, then the annotations as
 * `key=value`; no fiber ids, spans or trace ids (the JSON logger keeps those for machines). A
 * cause follows on indented lines. The same scrubbing as the JSON logger applies (`scrub.ts`).
 */
import { Array as Arr, Cause, FiberRefs, HashMap, Logger, type LogLevel } from "effect"
import { currentKnownSecrets, maskText, scrub } from "./scrub.js"

export interface PrettyOptions {
  /** ANSI colours for the level (a terminal that wants them; `NO_COLOR` says no). */
  readonly colors: boolean
}

const levelColor: Record<LogLevel.LogLevel["_tag"], string> = {
  All: "",
  Trace: "\u001b[90m",
  Debug: "\u001b[90m",
  Info: "\u001b[32m",
  Warning: "\u001b[33m",
  Error: "\u001b[31m",
  Fatal: "\u001b[1;31m",
  None: ""
}
const RESET = "\u001b[0m"
const DIM = "\u001b[2m"

/** A scrubbed value as it reads in a line: bare words stay bare, anything else is JSON. */
const valueText = (value: unknown): string => {
  if (typeof value === "string") return /^[^\s"=]+$/.test(value) ? value : JSON.stringify(value)
  return JSON.stringify(value) ?? String(value)
}

/** These lead, in this order; the rest follow alphabetically (a HashMap has no stable order). */
const leading = ["requestId", "method", "path", "status", "code", "url"]
const annotationOrder = (a: string, b: string): number => {
  const rank = (key: string) => (leading.includes(key) ? leading.indexOf(key) : leading.length)
  return rank(a) - rank(b) || a.localeCompare(b)
}

const messageText = (message: unknown): string =>
  Arr.ensure(message).map((part) => (typeof part === "string" ? part : valueText(part))).join(" ")

/** Formats one log call as a scrubbed, human-readable line (without the trailing newline). */
export const prettyLineLogger = (options: PrettyOptions): Logger.Logger<unknown, string> =>
  Logger.make(({ annotations, cause, context, date, logLevel, message }) => {
    const secrets = FiberRefs.getOrDefault(context, currentKnownSecrets)
    const level = logLevel.label.padEnd(5)
    const colored = options.colors ? `${levelColor[logLevel._tag]}${level}${RESET}` : level
    const time = date.toISOString().slice(11, 23)
    const pairs = HashMap.toEntries(annotations).sort(([a], [b]) => annotationOrder(a, b)).map(([key, value]) => {
      const scrubbed = (scrub({ [key]: value }, secrets) as Record<string, unknown>)[key]
      const pair = `${key}=${valueText(scrubbed)}`
      return options.colors ? `${DIM}${pair}${RESET}` : pair
    })
    const line = [options.colors ? `${DIM}${time}${RESET}` : time, colored, messageText(scrub(message, secrets)), ...pairs].join(" ")
    if (Cause.isEmpty(cause)) return line
    const rendered = maskText(Cause.pretty(cause, { renderErrorCause: true }), secrets)
    return `${line}\n${rendered.split("\n").map((l) => `    ${l}`).join("\n")}`
  })

/** The pretty logger, written with the fiber's `Console` (stdout by default). */
export const prettyLogger = (options: PrettyOptions): Logger.Logger<unknown, void> => Logger.withConsoleLog(prettyLineLogger(options))
