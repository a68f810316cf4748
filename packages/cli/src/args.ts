/**
 * Flags of one command, parsed strictly with `node:util` `parseArgs`: an unknown flag, a missing
 * value or a wrong number of arguments is a usage error (exit 2) before anything is sent.
 */
import { Effect } from "effect"
import { parseArgs } from "node:util"
import { UsageError } from "./failures.js"

type Flag = { readonly type: "string" } | { readonly type: "boolean" }
export type Flags = Readonly<Record<string, Flag>>

export interface Parsed {
  readonly values: Readonly<Record<string, string | boolean | undefined>>
  readonly positionals: ReadonlyArray<string>
  readonly json: boolean
}

/** `--json` is accepted by every command. */
export const parse = (
  argv: ReadonlyArray<string>,
  flags: Flags,
  positionals: { readonly min: number; readonly max: number; readonly usage: string }
): Effect.Effect<Parsed, UsageError> =>
  Effect.try({
    try: () => parseArgs({ args: [...argv], options: { ...flags, json: { type: "boolean" } }, allowPositionals: true, strict: true }),
    catch: (cause) => new UsageError({ message: `${cause instanceof Error ? cause.message : "bad flags"}\nusage: ${positionals.usage}` })
  }).pipe(
    Effect.filterOrFail(
      (parsed) => parsed.positionals.length >= positionals.min && parsed.positionals.length <= positionals.max,
      () => new UsageError({ message: `wrong number of arguments\nusage: ${positionals.usage}` })
    ),
    Effect.map((parsed) => ({
      values: parsed.values as Parsed["values"],
      positionals: parsed.positionals,
      json: parsed.values.json === true
    }))
  )

export const stringFlag = (parsed: Parsed, name: string): string | undefined => {
  const value = parsed.values[name]
  return typeof value === "string" ? value : undefined
}

export const requiredFlag = (parsed: Parsed, name: string, usage: string): Effect.Effect<string, UsageError> => {
  const value = stringFlag(parsed, name)
  return value === undefined || value === ""
    ? Effect.fail(new UsageError({ message: `--${name} is required\nusage: ${usage}` }))
    : Effect.succeed(value)
}
