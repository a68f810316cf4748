/**
 * Maps whose names have rules. A refined key schema in `Schema.Record` reports a bad key as an
 * unknown field, which is not what it is; these check each name with a filter instead, so a bad
 * name gets its own detail code at its own pointer.
 */
import { Either, ParseResult, Schema } from "effect"
import { detailMessage } from "./detailCodes.js"

/** The first issue `schema` finds in `value`, or true when there is none (a filter's answer). */
export const issueOf = (schema: Schema.Schema.AnyNoContext, value: string): true | ParseResult.ParseIssue =>
  Either.match(ParseResult.decodeUnknownEither(schema)(value), { onLeft: (issue) => issue, onRight: () => true })

/** At most `max` entries in a map (TOO_LONG). */
export const maxEntries = (max: number) =>
  <A extends Readonly<Record<string, unknown>>, I, R>(self: Schema.Schema<A, I, R>) =>
    self.pipe(
      Schema.filter((record) => Object.keys(record).length <= max, {
        message: detailMessage("TOO_LONG", `must hold at most ${max} entries`)
      })
    )

/**
 * Every key of a map checked by `key`, each problem at the key's own path. (A refined key
 * schema in `Schema.Record` reports a bad key as an unknown field, which is not what it is.)
 */
export const keysOf = (key: Schema.Schema.AnyNoContext) =>
  <A extends Readonly<Record<string, unknown>>, I, R>(self: Schema.Schema<A, I, R>) =>
    self.pipe(
      Schema.filter((record) =>
        Object.keys(record).flatMap((name) => {
          const issue = issueOf(key, name)
          return issue === true ? [] : [new ParseResult.Pointer(name, record, issue)]
        })
      )
    )

/** A map of `value`s whose names must satisfy `key`. */
export const KeyedRecord = <V extends Schema.Schema.Any>(key: Schema.Schema.AnyNoContext, value: V) =>
  Schema.Record({ key: Schema.String, value }).pipe(keysOf(key))
