/**
 * The `repository_sessions` table (migration 0015): the credential service's durable sessions,
 * so a restart or a second replica continues them, with the installation tokens minted for each
 * (`repository_session_tokens`, 0023). Time is judged by the database clock.
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { CredentialServiceLimits } from "../../schema/limits.js"

export const RepositorySessionInsert = Schema.Struct({
  id: Schema.String,
  admission_id: Schema.String,
  request_digest: Schema.String,
  bearer_digest: Schema.String,
  namespace_id: Schema.String,
  repository_ref: Schema.String,
  repository_id: Schema.String,
  repository: Schema.String,
  provider_instance_id: Schema.String,
  grant_id: Schema.String,
  profile: Schema.String,
  push_ref_allowlist: Schema.NullOr(Schema.Array(Schema.String)),
  duration_seconds: Schema.Number
})
export type RepositorySessionInsert = typeof RepositorySessionInsert.Type

export const RepositorySessionState = Schema.Literal("active", "CLOSED", "DISPOSED")

export const RepositorySessionRow = Schema.Struct({
  id: Schema.String,
  admission_id: Schema.String,
  request_digest: Schema.String,
  namespace_id: Schema.String,
  repository_ref: Schema.String,
  repository_id: Schema.String,
  repository: Schema.String,
  provider_instance_id: Schema.String,
  grant_id: Schema.String,
  profile: Schema.String,
  push_ref_allowlist: Schema.NullOr(Schema.Array(Schema.String)),
  state: RepositorySessionState,
  deadline_ms: Schema.NumberFromString,
  /** The deadline has passed (database clock). */
  expired: Schema.Boolean,
  closed: Schema.Boolean,
  tokens_settled: Schema.Boolean
})
export type RepositorySessionRow = typeof RepositorySessionRow.Type

const columns = (sql: SqlClient.SqlClient) => sql`
  id, admission_id, request_digest, namespace_id, repository_ref, repository_id, repository,
  provider_instance_id, grant_id, profile, push_ref_allowlist, state,
  (extract(epoch FROM deadline) * 1000)::bigint::text AS deadline_ms,
  deadline <= now() AS expired, closed_at IS NOT NULL AS closed, tokens_settled_at IS NOT NULL AS tokens_settled
`

const ById = Schema.Struct({ id: Schema.String })
const Count = Schema.Struct({ n: Schema.Number })

export class RepositorySessionsRepo extends Effect.Service<RepositorySessionsRepo>()("@svc/core/RepositorySessionsRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    const insert = SqlSchema.findOne({
      Request: RepositorySessionInsert,
      Result: ById,
      execute: (s) => sql`
        INSERT INTO repository_sessions (id, admission_id, request_digest, bearer_digest, namespace_id,
          repository_ref, repository_id, repository, provider_instance_id, grant_id, profile,
          push_ref_allowlist, state, deadline)
        VALUES (${s.id}, ${s.admission_id}, ${s.request_digest}, ${s.bearer_digest}, ${s.namespace_id},
          ${s.repository_ref}, ${s.repository_id}, ${s.repository}, ${s.provider_instance_id}, ${s.grant_id},
          ${s.profile}, ${s.push_ref_allowlist === null ? null : JSON.stringify(s.push_ref_allowlist)}::jsonb,
          'active', now() + make_interval(secs => ${s.duration_seconds}))
        ON CONFLICT (admission_id) DO NOTHING
        RETURNING id
      `
    })

    const byId = SqlSchema.findOne({
      Request: Schema.String,
      Result: RepositorySessionRow,
      execute: (id) => sql`SELECT ${columns(sql)} FROM repository_sessions WHERE id = ${id}`
    })

    const byAdmission = SqlSchema.findOne({
      Request: Schema.String,
      Result: RepositorySessionRow,
      execute: (admissionId) => sql`SELECT ${columns(sql)} FROM repository_sessions WHERE admission_id = ${admissionId}`
    })

    const byBearer = SqlSchema.findOne({
      Request: Schema.String,
      Result: RepositorySessionRow,
      execute: (digest) => sql`SELECT ${columns(sql)} FROM repository_sessions WHERE bearer_digest = ${digest}`
    })

    // What "active" means, for one session and for many: open, and before its deadline.
    const active = sql`state = 'active' AND deadline > now()`

    /** Whether the session still has local authority (not closed, disposed or past its deadline). */
    const isActive = SqlSchema.findOne({
      Request: Schema.String,
      Result: Schema.Struct({ id: Schema.String }),
      execute: (id) => sql`SELECT id FROM repository_sessions WHERE id = ${id} AND ${active}`
    })

    /** Those of the given sessions that are active, as `isActive` reads one. */
    const activeAmong = SqlSchema.findAll({
      Request: Schema.Array(Schema.String),
      Result: Schema.Struct({ id: Schema.String }),
      execute: (ids) =>
        sql`SELECT id FROM repository_sessions WHERE id IN ${sql.in(ids)} AND ${active}`
    })

    /** Sessions that still count against the limit: everything not yet disposed. */
    const countUndisposed = SqlSchema.single({
      Request: Schema.Void,
      Result: Count,
      execute: () => sql`SELECT count(*)::int AS n FROM repository_sessions WHERE state <> 'DISPOSED'`
    })

    /** Stops local authority; a no-op for a session already closed. */
    const close = SqlSchema.void({
      Request: Schema.String,
      execute: (id) => sql`
        UPDATE repository_sessions SET state = 'CLOSED', closed_at = now()
        WHERE id = ${id} AND state = 'active'
      `
    })

    const NoteToken = Schema.Struct({ session_id: Schema.String, id: Schema.String, expires_at_ms: Schema.Number })
    /**
     * Records an installation token minted for the session (its id here, never the token) before
     * it is used. A live token unsettles a session not yet disposed: one minted by a replica that
     * raced a close is pending again until it is revoked or expires.
     */
    const noteToken = SqlSchema.void({
      Request: NoteToken,
      execute: (t) => sql`
        WITH noted AS (
          INSERT INTO repository_session_tokens (id, session_id, expires_at)
          SELECT ${t.id}, id, to_timestamp(${t.expires_at_ms}::double precision / 1000)
          FROM repository_sessions WHERE id = ${t.session_id}
          RETURNING session_id
        )
        UPDATE repository_sessions SET tokens_settled_at = NULL
        WHERE id IN (SELECT session_id FROM noted) AND state <> 'DISPOSED' AND tokens_settled_at IS NOT NULL
      `
    })

    /** Tokens their holder revoked: no longer an obligation of their session. */
    const tokensRevoked = SqlSchema.void({
      Request: Schema.Array(Schema.String),
      execute: (ids) => sql`
        UPDATE repository_session_tokens SET revoked_at = now()
        WHERE id IN ${sql.in(ids)} AND revoked_at IS NULL
      `
    })

    /**
     * Settles an ended session once none of its tokens, whichever replica minted them, can be live: each
     * is revoked or past its expiry, and so is the latest expiry that a replica of the previous
     * release records in `token_expires_at` (migration 0023) during a rolling upgrade. `expires_at` is the code host's clock: a host up to the
     * provider clock skew allowance (SPEC 8) behind ours still honours the token that long after
     * our clock passed it.
     */
    const settleTokens = SqlSchema.void({
      Request: Schema.String,
      execute: (id) => sql`
        UPDATE repository_sessions s SET tokens_settled_at = now()
        WHERE s.id = ${id} AND s.tokens_settled_at IS NULL AND (s.state <> 'active' OR s.deadline <= now())
          AND (s.token_expires_at IS NULL
            OR s.token_expires_at + make_interval(secs => ${CredentialServiceLimits.providerClockSkewSeconds}) <= now())
          AND NOT EXISTS (
            SELECT 1 FROM repository_session_tokens t
            WHERE t.session_id = s.id AND t.revoked_at IS NULL
              AND t.expires_at + make_interval(secs => ${CredentialServiceLimits.providerClockSkewSeconds}) > now()
          )
      `
    })

    /** Closed (or expired) sessions whose tokens are settled become DISPOSED. */
    const dispose = SqlSchema.void({
      Request: Schema.String,
      execute: (id) => sql`
        UPDATE repository_sessions
        SET state = 'DISPOSED', disposed_at = now(), closed_at = coalesce(closed_at, now())
        WHERE id = ${id} AND state <> 'DISPOSED' AND tokens_settled_at IS NOT NULL
          AND (state = 'CLOSED' OR deadline <= now())
      `
    })

    /** Closed or expired sessions not yet disposed: what `repository.cleanup` settles (by admission id). */
    const undisposedEnded = SqlSchema.findAll({
      Request: Schema.Void,
      Result: Schema.Struct({ admission_id: Schema.String }),
      execute: () => sql`
        SELECT admission_id FROM repository_sessions
        WHERE state <> 'DISPOSED' AND (state = 'CLOSED' OR deadline <= now())
        ORDER BY deadline LIMIT 256
      `
    })

    /**
     * SPEC 8: terminal cleanup is retained one hour from local receipt, i.e. from `disposed_at`
     * (the database clock when the disposal was recorded here), not from the deadline, the close
     * or any time the code host reported; older disposed rows go.
     */
    const purgeDisposed = sql`
      DELETE FROM repository_sessions WHERE state = 'DISPOSED'
        AND disposed_at <= now() - make_interval(secs => ${CredentialServiceLimits.terminalCleanupRetentionSeconds})
    `.pipe(Effect.asVoid)

    /** Serializes admissions, so the session limit holds across replicas. */
    const lockAdmissions = sql`SELECT pg_advisory_xact_lock(hashtext('repository_sessions.admission'))`.pipe(Effect.asVoid)

    return {
      insert: (s: RepositorySessionInsert) => insert(s).pipe(Effect.orDie),
      byId: (id: string) => byId(id).pipe(Effect.orDie),
      byAdmission: (admissionId: string) => byAdmission(admissionId).pipe(Effect.orDie),
      byBearer: (digest: string) => byBearer(digest).pipe(Effect.orDie),
      isActive: (id: string) => isActive(id).pipe(Effect.map(Option.isSome), Effect.orDie),
      activeAmong: (ids: ReadonlyArray<string>) =>
        ids.length === 0
          ? Effect.succeed(new Set<string>())
          : activeAmong(ids).pipe(
            Effect.map((rows): ReadonlySet<string> => new Set(rows.map((r) => r.id))),
            Effect.orDie
          ),
      countUndisposed: countUndisposed(undefined).pipe(Effect.map((r) => r.n), Effect.orDie),
      close: (id: string) => close(id).pipe(Effect.orDie),
      settleTokens: (id: string) => settleTokens(id).pipe(Effect.orDie),
      noteToken: (sessionId: string, tokenId: string, expiresAtMs: number) =>
        noteToken({ session_id: sessionId, id: tokenId, expires_at_ms: expiresAtMs }).pipe(Effect.orDie),
      tokensRevoked: (tokenIds: ReadonlyArray<string>) =>
        tokenIds.length === 0 ? Effect.void : tokensRevoked(tokenIds).pipe(Effect.orDie),
      dispose: (id: string) => dispose(id).pipe(Effect.orDie),
      lockAdmissions: lockAdmissions.pipe(Effect.orDie),
      /** The worker keeps the SqlError: a lost database is a retryable work failure there. */
      undisposedEnded: undisposedEnded(undefined),
      purgeDisposed,
      withTransaction: sql.withTransaction
    }
  })
}) {}
