/**
 * The client commands of `svc` (DESIGN §16). `scripts/svc.mjs` calls `main` with the arguments
 * after `svc` when the first one names a client command; the returned number is the exit code
 * (README "CLI"). Each command group lives in its own file under `commands/`.
 */
import { Cause, Console, Effect, Exit, Option } from "effect"
import type { CommandGroup } from "./command.js"
import { agentCommands } from "./commands/agents.js"
import { authCommands } from "./commands/auth.js"
import { deployCommand } from "./commands/deploy.js"
import { namespaceCommands } from "./commands/namespaces.js"
import { credentialsPath } from "./credentialStore.js"
import { ExitCode, report } from "./failures.js"

// `svc audit export` (GET /audit) is to be added here as commands/audit.ts once that API lands.
const groups: ReadonlyArray<CommandGroup> = [...authCommands, namespaceCommands, agentCommands, deployCommand]

const byName = new Map(groups.flatMap((group) => group.names.map((name) => [name, group] as const)))

/** Whether `svc <word>` is a client command (the rest are process commands). */
export const isClientCommand = (word: string): boolean => byName.has(word)

/** The client commands for `svc help`. */
export const clientUsage = (): string => {
  const lines = groups.flatMap((group) => group.usage)
  return [
    "client commands (credentials in $SVC_CONFIG_DIR, $XDG_CONFIG_HOME/svc or ~/.config/svc):",
    ...lines.map(([usage, help]) => `  ${usage}\n      ${help}`),
    "",
    "Every client command takes --json (the response data as one JSON document).",
    "Exit codes: 0 ok, 1 unexpected, 2 usage, 3 not signed in/401, 4 403, 5 404, 6 409,",
    "7 other 4xx, 8 5xx or unreachable, 9 deployment failed (--wait)."
  ].join("\n")
}

const printFailure = (error: unknown): Effect.Effect<ExitCode> => {
  const { code, details, exitCode, message } = report(error)
  return Effect.as(Console.error([`svc: ${code}: ${message}`, ...details.map((line) => `  ${line}`)].join("\n")), exitCode)
}

/** Runs one client command; resolves with its exit code. */
export const main = async (argv: ReadonlyArray<string>): Promise<ExitCode> => {
  const [name, ...rest] = argv
  const group = name === undefined ? undefined : byName.get(name)
  if (group === undefined) {
    console.error(`svc: USAGE: unknown command ${name ?? ""}\n\n${clientUsage()}`)
    return ExitCode.usage
  }
  const program = group.run(rest, { credentialsFile: credentialsPath() })
  const exit = await Effect.runPromiseExit(program)
  if (Exit.isSuccess(exit)) return ExitCode.ok
  const failure = Cause.failureOption(exit.cause)
  return Effect.runPromise(
    Option.isSome(failure) ? printFailure(failure.value) : Effect.as(Console.error("svc: UNEXPECTED: an unexpected failure"), ExitCode.unexpected)
  )
}
