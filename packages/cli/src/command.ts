/** The shape every command group has: its usage lines and how it runs. */
import type { Effect } from "effect"

export interface CommandContext {
  /** Where the credentials are kept (`credentialStore.credentialsPath`). */
  readonly credentialsFile: string
}

export interface CommandGroup {
  /** The first word(s) after `svc`. */
  readonly names: ReadonlyArray<string>
  /** One `svc …  what it does` line per subcommand, for `svc help`. */
  readonly usage: ReadonlyArray<readonly [string, string]>
  readonly run: (argv: ReadonlyArray<string>, context: CommandContext) => Effect.Effect<void, unknown>
}
