import type { Statement } from "@effect/sql"
import { type Effect, type ParseResult, Schema } from "effect"
import { trustedDecoder } from "../schema/trusted.js"

/**
 * One keyset page of a list, not yet run: its statement (WHERE, `ORDER BY id`, LIMIT) and how
 * to decode its rows. The API runs it inside the statement that also authorizes the list, so a
 * page costs one round trip (issue 11).
 */
export interface PageQuery<A> {
  readonly statement: Statement.Fragment
  /** The page's order over its output columns (the statement aliased `page`): its keyset key. */
  readonly orderBy: string
  readonly decode: (rows: ReadonlyArray<unknown>) => Effect.Effect<ReadonlyArray<A>, ParseResult.ParseError>
}

/** Each row schema's page decoder, prepared once (a repository builds a `PageQuery` per request). */
const decoders = new WeakMap<Schema.Schema.Any, PageQuery<unknown>["decode"]>()

/**
 * The page's rows are decoded by a prepared trusted decoder (`trustedDecoder`): what a column's
 * type does not pin down is checked (nulls, literals, strings, dates, JSON records), the
 * refinements of values this service wrote (id patterns) are not run again.
 */
export const pageQuery = <A, I>(Row: Schema.Schema<A, I>, statement: Statement.Fragment, orderBy = "page.id"): PageQuery<A> => {
  let decode = decoders.get(Row)
  if (decode === undefined) {
    decode = trustedDecoder(Schema.Array(Row))
    decoders.set(Row, decode)
  }
  return { statement, orderBy, decode: decode as PageQuery<A>["decode"] }
}

/** The keyset cursor: rows after `after` by `idColumn`, or all of them on the first page. */
export const afterCursor = (sql: Statement.Constructor, idColumn: string, after: string | undefined) =>
  after === undefined ? sql`TRUE` : sql`${sql.unsafe(idColumn)} > ${after}`
