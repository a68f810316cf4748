/**
 * Migration 0023 moves the one expiry 0015 kept per session into `repository_session_tokens`: a
 * session whose cleanup was still pending keeps waiting for that token (nobody is known to hold
 * it), and a settled one gets no row. The old column stays for replicas of the previous release
 * during a rolling upgrade, and an expiry they record there still holds cleanup back.
 */
import { Migrator, SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Migrations } from "@svc/core/db"
import { Effect, Layer } from "effect"
import { pgClientLayer, TestDatabaseUrl } from "../../../testing/database.js"
import { migrations } from "../src/db/migrations/index.js"
import { RepositorySessionsRepo } from "../src/db/repos/repositorySessions.js"

const before0023 = Migrator.make({})({
  loader: Migrator.fromRecord(Object.fromEntries(Object.entries(migrations).filter(([key]) => key < "0023"))),
  table: "svc_migrations"
})

const insertSession = (sql: SqlClient.SqlClient, id: string, tokenExpires: string | null, settled: boolean) => sql`
  INSERT INTO repository_sessions (id, admission_id, request_digest, bearer_digest, namespace_id, repository_ref,
    repository_id, repository, provider_instance_id, grant_id, profile, state, deadline, closed_at,
    token_expires_at, tokens_settled_at)
  VALUES (${id}, ${`adm-${id}`}, 'd', ${`b-${id}`}, 'ns', 'widgets', '1001', 'acme/widgets', 'p', 'g', 'git-read',
    'CLOSED', now(), now(), ${tokenExpires}::timestamptz, ${settled ? new Date().toISOString() : null}::timestamptz)
`

describe("migration 0023", () => {
  it.layer(Layer.unwrapScoped(Effect.map(TestDatabaseUrl, pgClientLayer)), { timeout: 60_000 })((it) => {
    it.effect("keeps a pending session's recorded expiry as an unrevoked token, none for a settled one", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        yield* before0023
        const expires = "2030-01-01T00:00:00.000Z"
        yield* insertSession(sql, "rs_pending", expires, false)
        yield* insertSession(sql, "rs_settled", expires, true)
        yield* insertSession(sql, "rs_none", null, false)
        yield* Migrations.run
        const rows = yield* sql<{ id: string; session_id: string; expires_at: Date; revoked_at: Date | null }>`
          SELECT id, session_id, expires_at, revoked_at FROM repository_session_tokens ORDER BY id
        `
        expect(rows.map((r) => [r.id, r.session_id, r.expires_at.toISOString(), r.revoked_at])).toEqual([
          ["legacy-rs_pending", "rs_pending", expires, null]
        ])
        const column = yield* sql<{ n: number }>`
          SELECT count(*)::int AS n FROM information_schema.columns
          WHERE table_name = 'repository_sessions' AND column_name = 'token_expires_at'
        `
        expect(column[0]!.n).toBe(1)
      }))

    it.effect("an expiry a previous-release replica records in the old column keeps an ended session pending", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const repo = yield* Effect.provide(RepositorySessionsRepo, RepositorySessionsRepo.Default)
        yield* insertSession(sql, "rs_old_replica", null, false)
        const settled = sql<{ settled: boolean }>`
          SELECT tokens_settled_at IS NOT NULL AS settled FROM repository_sessions WHERE id = 'rs_old_replica'
        `
        yield* sql`UPDATE repository_sessions SET token_expires_at = now() + interval '1 hour' WHERE id = 'rs_old_replica'`
        yield* repo.settleTokens("rs_old_replica")
        expect((yield* settled)[0]!.settled).toBe(false)
        // Past its expiry and the provider clock skew allowance (60 s): nothing holds cleanup back.
        yield* sql`UPDATE repository_sessions SET token_expires_at = now() - interval '61 seconds' WHERE id = 'rs_old_replica'`
        yield* repo.settleTokens("rs_old_replica")
        expect((yield* settled)[0]!.settled).toBe(true)
      }))
  })
})
