/**
 * Request bodies a command builds from its arguments or a file, checked with the contract's own
 * schema before sending: a rejected one is reported like the service's 400 (exit 7, with
 * `details`), and nothing is sent.
 */
import { Effect, ParseResult, Schema } from "effect"
import { InvalidInput } from "./failures.js"

export const decodeInput = <A, I>(schema: Schema.Schema<A, I>, value: unknown, what: string): Effect.Effect<A, InvalidInput> =>
  Schema.decodeUnknown(schema, { errors: "all", onExcessProperty: "error" })(value).pipe(
    Effect.mapError((error) =>
      new InvalidInput({
        message: `${what} is not valid`,
        details: ParseResult.ArrayFormatter.formatErrorSync(error).map((issue) => ({
          path: "/" + issue.path.map(String).join("/"),
          message: issue.message
        }))
      })
    )
  )
