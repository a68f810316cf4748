/**
 * Which log lines a process writes. Machines (a pipe, a log collector, production) get JSON
 * lines; a developer watching `npm start` in a terminal gets readable lines. `SVC_LOG_FORMAT`
 * is the operator's explicit choice and wins over both defaults.
 */
import { Option } from "effect"
import type { Environment } from "../config/process.js"

/** `json` for machines (the default), `pretty` for a person at a terminal (`prettyLogger.ts`). */
export type LogFormat = { readonly _tag: "json" } | { readonly _tag: "pretty"; readonly colors: boolean }

export interface Terminal {
  /** Whether stdout is a terminal. */
  readonly isTTY: boolean
  /** `NO_COLOR` set (https://no-color.org): readable lines, no colours. */
  readonly noColor: boolean
}

export const selectLogFormat = (
  requested: Option.Option<"json" | "pretty">,
  env: Environment,
  terminal: Terminal
): LogFormat => {
  const pretty = Option.match(requested, {
    onNone: () => env === "development" && terminal.isTTY,
    onSome: (format) => format === "pretty"
  })
  return pretty ? { _tag: "pretty", colors: terminal.isTTY && !terminal.noColor } : { _tag: "json" }
}
