import { SqlClient, type Statement } from "@effect/sql"
import { SqlError } from "@effect/sql/SqlError"
import { Effect, Either, Option } from "effect"
import * as crypto from "node:crypto"
import pg from "pg"

/**
 * Statements on the request path sent as named prepared statements on the process's pool
 * (`PgPool`): PostgreSQL parses and plans each distinct text once per connection instead of on
 * every request, and the request skips `@effect/sql`'s statement path
 * (docs/decisions/performance.md). A statement's name is a digest of its text, so a name always
 * means the same text on every connection. Only texts built from fixed fragments belong here
 * (every value a parameter): each distinct text stays prepared on each connection.
 *
 * Such a statement is not cancelled when its fiber is interrupted (a client that went away): it
 * runs to its end and its answer is dropped. Use it for short reads, and for short writes that
 * may be repeated (an enqueue by idempotency key): an interrupted caller cannot tell whether a
 * write took place either way.
 */
const names = new Map<string, string>()

const nameOf = (text: string): string => {
  let name = names.get(text)
  if (name === undefined) {
    name = `svc_${crypto.createHash("sha256").update(text).digest("hex").slice(0, 24)}`
    names.set(text, name)
  }
  return name
}

/**
 * How long a named statement may wait for its answer (`pg`'s per-query `query_timeout`). A
 * database that stops answering with connections still open (frozen, or lost behind a silent
 * network failure) would otherwise hold the request, and the connection, until it answers or the
 * kernel gives up on the socket, which takes many minutes. Past the deadline the statement fails
 * (503 `DEPENDENCY_UNAVAILABLE` on a request) and the pool drops its connection, since `pg` still
 * counts the statement as running there. Statements here are short reads and writes; set per
 * pool by `pgPoolLayer` (`statementDeadline`).
 */
export const DEFAULT_STATEMENT_DEADLINE_MS = 10_000
const deadlines = new WeakMap<pg.Pool, number>()

/** Sets the deadline of the named statements sent on `pool`. */
export const setStatementDeadline = (pool: pg.Pool, ms: number): void => {
  deadlines.set(pool, ms)
}

/**
 * A statement as `pg` runs it, built from its text rather than from a config object: `pg` copies a
 * config object through its property descriptors on every call, which took 6-14 µs a statement
 * here against under 0.5 µs for a query built from text (docs/decisions/performance.md,
 * "Session 17"). `pg` reads `name` and `query_timeout` from the query it is given.
 */
const statement = (name: string | undefined, text: string, values: ReadonlyArray<unknown>, query_timeout: number) =>
  Object.assign(new pg.Query(text, values as Array<unknown>), { name, query_timeout })

type Answer<Row> = (error: Error | undefined, result: pg.QueryResult<Row & pg.QueryResultRow>) => void

// `Pool#query` takes a query object with a callback, which it sets on the query to give the
// connection back; `pg`'s types declare only the promise form for query objects.
const submit = <Row>(pool: pg.Pool, query: pg.Query, answer: Answer<Row>): void => {
  ;(pool.query as unknown as (query: pg.Query, answer: Answer<Row>) => void).call(pool, query, answer)
}

// `pg`'s error for a statement past its `query_timeout`.
const isDeadlinePassed = (error: Error) => error.message === "Query read timeout"

const failed = (cause: Error) =>
  new SqlError({ cause, message: isDeadlinePassed(cause) ? "The database did not answer in time" : "Failed to execute statement" })

/**
 * A statement prepared on a connection before a migration changed the row type it returns
 * (PostgreSQL: "cached plan must not change result type") fails there until the connection goes;
 * during a rolling upgrade that is every connection of a process still running. Such a call is
 * sent again unnamed, which PostgreSQL plans afresh.
 */
const isStaleResultType = (error: Error) =>
  (error as { readonly code?: unknown }).code === "0A000" && /cached plan must not change result type/.test(error.message)

/**
 * Sends `text` with `values` as a named prepared statement on `pool` and calls `answer` once,
 * with its rows or its `SqlError`: for callers that settle several fibers from one answer (the
 * work engine's coalesced claims). Effects use `queryNamed`.
 */
export const sendNamed = <Row extends object>(
  pool: pg.Pool,
  text: string,
  values: ReadonlyArray<unknown>,
  answer: (result: Either.Either<ReadonlyArray<Row>, SqlError>) => void
): void => {
  // `pool.query` hands an errored client back with its error, so the pool ends it.
  const query_timeout = deadlines.get(pool) ?? DEFAULT_STATEMENT_DEADLINE_MS
  const settle =
    (retry: boolean): Answer<Row> =>
    (error, result) => {
      if (error && retry && isStaleResultType(error)) {
        submit(pool, statement(undefined, text, values, query_timeout), settle(false))
        return
      }
      answer(error ? Either.left(failed(error)) : Either.right(result.rows))
    }
  submit(pool, statement(nameOf(text), text, values, query_timeout), settle(true))
}

/** Runs `text` with `values` as a named prepared statement on `pool`. */
export const queryNamed = <Row extends object>(
  pool: pg.Pool,
  text: string,
  values: ReadonlyArray<unknown>
): Effect.Effect<ReadonlyArray<Row>, SqlError> =>
  Effect.async<ReadonlyArray<Row>, SqlError>((resume) => sendNamed<Row>(pool, text, values, (result) => resume(result)))

/**
 * Runs a built statement as a named prepared statement on `pool`; inside a transaction, through
 * its SqlClient as usual, so that it reads on the transaction's connection.
 */
export const runNamed = <Row extends object>(
  pool: pg.Pool,
  statement: Statement.Statement<Row>
): Effect.Effect<ReadonlyArray<Row>, SqlError> =>
  Effect.flatMap(Effect.serviceOption(SqlClient.TransactionConnection), (transaction) => {
    if (Option.isSome(transaction)) return statement
    const [text, values] = statement.compile()
    return queryNamed<Row>(pool, text, values)
  })
