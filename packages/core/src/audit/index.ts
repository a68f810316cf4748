import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import { CurrentRequestId } from "../schema/envelope.js"
import { withExportedSpan } from "../observability/spans.js"

/** One audit record (SPEC 6). Only non-secret ids and facts: never a credential value. */
export interface AuditEvent {
  readonly kind: string
  readonly outcome: "success" | "failure" | "denied"
  readonly actorPrincipalId?: string | null | undefined
  readonly namespaceId?: string | null | undefined
  readonly resource?: { readonly kind: string; readonly id: string } | undefined
  readonly details?: Record<string, string | number | boolean | null | ReadonlyArray<string>> | undefined
}

/**
 * Writes an audit record with the ambient SqlClient, so inside a transaction it commits (or not)
 * together with the change it describes. Carries the current request id.
 */
export const recordAudit = (event: AuditEvent): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const requestId = yield* CurrentRequestId
    yield* sql`
      INSERT INTO audit_events (kind, outcome, actor_principal_id, request_id, namespace_id, resource_kind, resource_id, details)
      VALUES (
        ${event.kind}, ${event.outcome}, ${event.actorPrincipalId ?? null},
        ${requestId.startsWith("req_00000000-") ? null : requestId}, ${event.namespaceId ?? null},
        ${event.resource?.kind ?? null}, ${event.resource?.id ?? null}, ${JSON.stringify(event.details ?? {})}::jsonb
      )
    `
  }).pipe(withExportedSpan("Audit.record", { attributes: { kind: event.kind, outcome: event.outcome } }))

/**
 * The audit log as a service: the SqlClient is taken once, so callers need nothing but the
 * event. Inside `sql.withTransaction` the record still joins the caller's transaction (the
 * client finds the transaction's connection in the fiber's context).
 */
export class AuditLog extends Effect.Service<AuditLog>()("@svc/core/AuditLog", {
  effect: Effect.map(SqlClient.SqlClient, (sql) => ({
    record: (event: AuditEvent): Effect.Effect<void, SqlError> =>
      recordAudit(event).pipe(Effect.provideService(SqlClient.SqlClient, sql))
  }))
}) {}
