/**
 * Counts the statements every pg client sends while an effect runs (issue 11: round trips per
 * request). The test server runs in the test's process and nothing else queries meanwhile.
 */
import { Effect } from "effect"
import pg from "pg"

/** Runs `effect` counting the statements every pg client sends meanwhile, and their names (null: unnamed). */
export const counted = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.acquireUseRelease(
    Effect.sync(() => {
      const original = pg.Client.prototype.query
      const counter = { statements: 0, names: [] as Array<string | null>, original }
      pg.Client.prototype.query = function (this: pg.Client, ...args: Parameters<typeof original>) {
        counter.statements++
        const config: unknown = args[0]
        counter.names.push(typeof config === "object" && config !== null && "name" in config ? String(config.name) : null)
        return (original as (...a: Parameters<typeof original>) => ReturnType<typeof original>).apply(this, args)
      } as typeof original
      return counter
    }),
    (counter) => Effect.map(effect, (result) => ({ result, statements: counter.statements, names: counter.names })),
    (counter) => Effect.sync(() => { pg.Client.prototype.query = counter.original })
  )
