import { SqlClient, type Statement } from "@effect/sql"
import type { Row } from "@effect/sql/SqlConnection"
import type { SqlError } from "@effect/sql/SqlError"
import { queryNamed } from "@svc/core/db"
import { type Caller, digestOf } from "@svc/core/iam"
import { NamespaceId, PrincipalId, ServiceKeyId, ServicePrincipalId, SessionId, UserId } from "@svc/core/schema"
import { Effect, Either, Option, Schema } from "effect"
import type pg from "pg"
import { type Preauthorization, preauthorizationSql, recordPreauthorized } from "./preauthorization.js"
import { withExportedSpan } from "@svc/core/observability"

// On the hot path of every authenticated request: one statement per credential. With an
// endpoint's preauthorization, the same statement also carries its decision and row.

/** The columns a preauthorization adds (absent without one). */
const PreauthorizedColumns = {
  svc_allowed: Schema.optional(Schema.NullOr(Schema.Boolean)),
  svc_row: Schema.optional(Schema.Unknown)
}

const ServiceKeyCredentialRow = Schema.Struct({
  id: ServiceKeyId,
  principal_id: ServicePrincipalId,
  key_namespace: Schema.NullOr(NamespaceId),
  principal_namespace: Schema.NullOr(NamespaceId),
  ...PreauthorizedColumns
})

const SessionCredentialRow = Schema.Struct({
  id: SessionId,
  session_key: Schema.String,
  account_id: UserId,
  principal_id: PrincipalId,
  ...PreauthorizedColumns
})

/** The credential statement, with `preauthorization`'s columns over the principal it finds. */
const withPreauthorization = (
  sql: SqlClient.SqlClient,
  credential: Statement.Statement<Row>,
  preauthorization: Preauthorization | undefined,
  namespaceColumn: Statement.Fragment
): Statement.Statement<Row> =>
  preauthorization === undefined
    ? credential
    : sql`SELECT svc_credential.*, svc_pre.*
          FROM (${credential}) AS svc_credential
            CROSS JOIN LATERAL (${preauthorizationSql(sql, preauthorization, { id: sql`svc_credential.principal_id`, namespaceId: namespaceColumn })}) AS svc_pre`

/** A credential's digest (`digestOf`), the one parameter of a credential statement that varies. */
type Digest = ReturnType<typeof digestOf> | typeof DIGEST

/** Stands for the credential's digest while a statement is compiled; never sent. */
const DIGEST = "\u0000svc-credential-digest"

/** A statement as the lookups run it: its rows, or the database's error. */
type Run = (digest: Digest) => Effect.Effect<ReadonlyArray<Row>, SqlError>

/**
 * A credential statement compiled once (its text and fixed parameters), then run per request
 * with the request's digest as its one varying parameter: building and compiling the fragments
 * (the credential, the decision's predicate, the row) took more CPU per request than the rest of
 * `@effect/sql`'s statement path. The statement run is the same text and parameters as before.
 *
 * Given the process's pool (`PgPool`), it runs as a named prepared statement there: PostgreSQL
 * parses and plans this many-join statement once per connection instead of on every request,
 * and the request skips `@effect/sql`'s statement path (docs/decisions/performance.md). Such a
 * statement is not cancelled when its request is interrupted (the client went away); it is a
 * short read and its answer is dropped.
 */
const compiledOnce = (
  sql: SqlClient.SqlClient,
  pool: pg.Pool | undefined,
  statement: (digest: Digest) => Statement.Statement<Row>
): Run => {
  const [text, params] = statement(DIGEST).compile()
  const at = params.indexOf(DIGEST)
  if (at < 0 || params.indexOf(DIGEST, at + 1) >= 0) throw new Error("a credential statement takes its digest exactly once")
  const valuesWith = (digest: Digest) => {
    const values = params.slice()
    values[at] = digest
    return values
  }
  if (pool === undefined) return (digest) => sql.unsafe<Row>(text, valuesWith(digest))
  return (digest) => queryNamed<Row>(pool, text, valuesWith(digest))
}

/**
 * `build`'s statement per preauthorization (none included), each compiled when first run. The
 * preauthorizations are the middleware's fixed list, so this holds a few statements at most.
 */
const compiledPer = (
  sql: SqlClient.SqlClient,
  pool: pg.Pool | undefined,
  build: (digest: Digest, preauthorization: Preauthorization | undefined) => Statement.Statement<Row>
) => {
  const compiled = new Map<Preauthorization | undefined, Run>()
  return (digest: Digest, preauthorization: Preauthorization | undefined): Effect.Effect<ReadonlyArray<Row>, SqlError> => {
    let run = compiled.get(preauthorization)
    if (run === undefined) {
      run = compiledOnce(sql, pool, (placeholder) => build(placeholder, preauthorization))
      compiled.set(preauthorization, run)
    }
    return run(digest)
  }
}

/** Hands the preauthorization's answer to the handler with the request's Caller. */
const answered = <C extends Caller>(
  caller: C,
  preauthorization: Preauthorization | undefined,
  row: { readonly svc_allowed?: boolean | null | undefined; readonly svc_row?: unknown }
): C => {
  if (preauthorization !== undefined) recordPreauthorized(caller, preauthorization, { allowed: row.svc_allowed === true, row: row.svc_row ?? null })
  return caller
}

/** The one row of a credential statement, decoded; none when the credential is not valid. */
const credentialRow = <A, I>(Row: Schema.Schema<A, I>) => {
  const decode = Schema.decodeUnknownEither(Row)
  return <E>(statement: Effect.Effect<ReadonlyArray<unknown>, E>): Effect.Effect<Option.Option<A>, E> =>
    Effect.flatMap(statement, (rows) => {
      if (rows.length === 0) return Effect.succeedNone
      const row = decode(rows[0])
      // A row that does not decode is a defect: the schema and the table disagree.
      return Either.isRight(row) ? Effect.succeedSome(row.right) : Effect.die(row.left)
    })
}

const serviceKeyRow = credentialRow(ServiceKeyCredentialRow)
const sessionRow = credentialRow(SessionCredentialRow)

/**
 * The credential lookups over one SqlClient (taken once, not from each request's context) and,
 * when given, the pool behind it for named statements (the middleware's). Each is one statement,
 * and its row decoded synchronously: the hot path of every request. They open no span of their
 * own: the middleware's `Auth.authenticate` span is theirs (a nested span costs two context and
 * fiber-ref copies per request); the standalone lookups below open one each.
 */
export const credentialResolvers = (sql: SqlClient.SqlClient, pool?: pg.Pool) => {
  const serviceKeyStatement = compiledPer(sql, pool, (digest, preauthorization) =>
    withPreauthorization(sql, sql`
      SELECT k.id, k.service_principal_id AS principal_id, k.namespace_id AS key_namespace,
             p.namespace_id AS principal_namespace
      FROM service_keys k JOIN principals p ON p.id = k.service_principal_id
      WHERE k.digest = ${digest} AND k.revoked_at IS NULL AND k.expires_at > now()
        AND p.deleted_at IS NULL AND p.kind = 'service'
    `, preauthorization, sql`svc_credential.principal_namespace`))
  // A human principal is never Namespace-scoped (its Caller's namespaceId is null).
  const sessionStatement = compiledPer(sql, pool, (digest, preauthorization) =>
    withPreauthorization(sql, sql`
      SELECT s.id, s.session_key, a.id AS account_id, a.principal_id
      FROM sessions s
        JOIN accounts a ON a.id = s.account_id
        JOIN principals p ON p.id = a.principal_id
      WHERE s.token_digest = ${digest} AND s.revoked_at IS NULL AND s.expires_at > now()
        AND NOT a.disabled AND a.revoked_at IS NULL AND p.deleted_at IS NULL
    `, preauthorization, sql`NULL::text`))
  return {
    /**
     * Resolves a service key from storage on every request: active (not revoked, not expired), of
     * a live non-Agent service principal. A key whose principal changed scope since issuance is
     * reported so the caller gets 403, not access with the new scope.
     */
    serviceKey: (key: string, preauthorization?: Preauthorization): Effect.Effect<Option.Option<Caller | "scope-changed">, SqlError> =>
      serviceKeyRow(serviceKeyStatement(digestOf(key), preauthorization)).pipe(
        Effect.map(Option.map((row) => {
          if (row.key_namespace !== row.principal_namespace) return "scope-changed" as const
          return answered({
            principalId: row.principal_id,
            kind: "service",
            namespaceId: row.principal_namespace,
            credential: { _tag: "ServiceKey", keyId: row.id }
          } satisfies Caller, preauthorization, row)
        }))
      ),

    /** Resolves a session from storage on every request (no cookie caching, SPEC 5.2). */
    session: (token: string, preauthorization?: Preauthorization): Effect.Effect<Option.Option<Caller>, SqlError> =>
      sessionRow(sessionStatement(digestOf(token), preauthorization)).pipe(
        Effect.map(Option.map((row) =>
          answered({
            principalId: row.principal_id,
            kind: "human",
            namespaceId: null,
            credential: { _tag: "Session", sessionId: row.id, accountId: row.account_id, sessionKey: row.session_key }
          } satisfies Caller, preauthorization, row)
        ))
      )
  }
}

/** `credentialResolvers(sql).serviceKey` with the SqlClient of the context. */
export const resolveServiceKey = (
  key: string,
  preauthorization?: Preauthorization
): Effect.Effect<Option.Option<Caller | "scope-changed">, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => credentialResolvers(sql).serviceKey(key, preauthorization)).pipe(
    withExportedSpan("Auth.resolveServiceKey")
  )

/** `credentialResolvers(sql).session` with the SqlClient of the context. */
export const resolveSession = (
  token: string,
  preauthorization?: Preauthorization
): Effect.Effect<Option.Option<Caller>, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => credentialResolvers(sql).session(token, preauthorization)).pipe(
    withExportedSpan("Auth.resolveSession")
  )
