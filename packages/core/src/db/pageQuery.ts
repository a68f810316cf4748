import type { Statement } from "@effect/sql"
import { type Effect, type ParseResult, Schema } from "effect"

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

export const pageQuery = <A, I>(Row: Schema.Schema<A, I>, statement: Statement.Fragment, orderBy = "page.id"): PageQuery<A> => ({
  statement,
  orderBy,
  decode: Schema.decodeUnknown(Schema.Array(Row))
})

/** The keyset cursor: rows after `after` by `idColumn`, or all of them on the first page. */
export const afterCursor = (sql: Statement.Constructor, idColumn: string, after: string | undefined) =>
  after === undefined ? sql`TRUE` : sql`${sql.unsafe(idColumn)} > ${after}`
