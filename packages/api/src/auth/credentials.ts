import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { type Caller, digestOf } from "@svc/core/iam"
import { Effect, Option } from "effect"

/**
 * Resolves a service key from storage on every request: active (not revoked, not expired), of a
 * live non-Agent service principal. A key whose principal changed scope since issuance is
 * reported so the caller gets 403, not access with the new scope.
 */
export const resolveServiceKey = (
  key: string
): Effect.Effect<Option.Option<Caller | "scope-changed">, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ id: string; principal_id: string; key_namespace: string | null; principal_namespace: string | null }>`
      SELECT k.id, k.service_principal_id AS principal_id, k.namespace_id AS key_namespace,
             p.namespace_id AS principal_namespace
      FROM service_keys k JOIN principals p ON p.id = k.service_principal_id
      WHERE k.digest = ${digestOf(key)} AND k.revoked_at IS NULL AND k.expires_at > now()
        AND p.deleted_at IS NULL AND p.kind = 'service'
    `
    const row = rows[0]
    if (row === undefined) return Option.none()
    if (row.key_namespace !== row.principal_namespace) return Option.some("scope-changed" as const)
    return Option.some({
      principalId: row.principal_id,
      kind: "service",
      namespaceId: row.principal_namespace,
      credential: { _tag: "ServiceKey", keyId: row.id }
    } satisfies Caller)
  }).pipe(Effect.withSpan("Auth.resolveServiceKey"))

/** Resolves a session from storage on every request (no cookie caching, SPEC 5.2). */
export const resolveSession = (
  token: string
): Effect.Effect<Option.Option<Caller>, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ id: string; session_key: string; account_id: string; principal_id: string }>`
      SELECT s.id, s.session_key, a.id AS account_id, a.principal_id
      FROM sessions s
        JOIN accounts a ON a.id = s.account_id
        JOIN principals p ON p.id = a.principal_id
      WHERE s.token_digest = ${digestOf(token)} AND s.revoked_at IS NULL AND s.expires_at > now()
        AND NOT a.disabled AND a.revoked_at IS NULL AND p.deleted_at IS NULL
    `
    const row = rows[0]
    if (row === undefined) return Option.none()
    return Option.some({
      principalId: row.principal_id,
      kind: "human",
      namespaceId: null,
      credential: { _tag: "Session", sessionId: row.id, accountId: row.account_id, sessionKey: row.session_key }
    } satisfies Caller)
  }).pipe(Effect.withSpan("Auth.resolveSession"))
