/**
 * Reading the audit trail (DESIGN §18, docs/decisions/audit-api.md): authorization, then one
 * keyset page. Entries carry what `AuditLog` recorded: ids and facts, never a secret value.
 */
import type { AuditEntry, AuditPage, AuditQuery } from "@svc/core/api"
import { AUDIT_PAGE_DEFAULT } from "@svc/core/api"
import { type AuditEventFilter, type AuditEventRow, AuditEventsRepo } from "@svc/core/db"
import { InvalidRequest } from "@svc/core/errors"
import { CurrentCaller, decide, Installation } from "@svc/core/iam"
import type { NamespaceId } from "@svc/core/schema"
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { Authorization } from "../auth/authorize.js"
import { namespaceRef } from "../iam/access.js"
import { decodeCursor, encodeCursor } from "./cursor.js"

type Details = AuditEntry["details"]

const toEntry = (row: AuditEventRow): AuditEntry => ({
  id: row.id,
  kind: row.kind,
  at: row.at,
  actor: row.actor_principal_id,
  outcome: row.outcome,
  namespaceId: row.namespace_id,
  resource: row.resource_kind === null || row.resource_id === null ? null : { kind: row.resource_kind, id: row.resource_id },
  requestId: row.request_id,
  details: typeof row.details === "object" && row.details !== null ? (row.details as Details) : {}
})

const emptyWindow = () =>
  new InvalidRequest({ message: "`until` must be after `since`.", details: [{ code: "INVALID_VALUE", path: "/until" }] })

export class AuditQueries extends Effect.Service<AuditQueries>()("@svc/api/AuditQueries", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* AuditEventsRepo
    const { authorize } = yield* Authorization

    const page = (query: AuditQuery, namespaceId: NamespaceId | undefined) =>
      Effect.gen(function* () {
        const since = query.since === undefined ? undefined : new Date(query.since)
        const until = query.until === undefined ? undefined : new Date(query.until)
        if (since !== undefined && until !== undefined && until <= since) return yield* emptyWindow()
        const after = query.cursor === undefined ? undefined : yield* decodeCursor(query.cursor)
        const limit = query.limit ?? AUDIT_PAGE_DEFAULT
        const filter: AuditEventFilter = {
          namespaceId, after, since, until, limit: limit + 1,
          actor: query.actor, kind: query.kind, resourceKind: query.resourceKind, resourceId: query.resourceId, outcome: query.outcome
        }
        const rows = yield* repo.page(filter)
        const shown = rows.slice(0, limit)
        const last = shown[shown.length - 1]
        const nextCursor = rows.length > limit && last !== undefined ? encodeCursor({ at: last.at_key, id: last.id }) : null
        return { entries: shown.map(toEntry), nextCursor } satisfies AuditPage
      })

    const list = Effect.fn("Audit.list")(function* (query: AuditQuery) {
      yield* authorize("installation:administer", Installation)
      return yield* page(query, undefined)
    })

    /**
     * `namespace:read` first (404 when the caller cannot see the Namespace), then
     * `namespace:administer` on it, which an Installation administrator holds implicitly.
     */
    const listNamespace = Effect.fn("Audit.listNamespace")(function* (namespaceId: NamespaceId, query: AuditQuery) {
      const caller = yield* CurrentCaller
      yield* authorize("namespace:read", namespaceRef(namespaceId))
      const installationAdmin = caller.namespaceId === null &&
        (yield* decide(caller, "installation:administer", Installation).pipe(
          Effect.provideService(SqlClient.SqlClient, sql),
          Effect.orDie
        ))._tag === "Allowed"
      if (!installationAdmin) yield* authorize("namespace:administer", namespaceRef(namespaceId))
      return yield* page(query, namespaceId)
    })

    return { list, listNamespace } as const
  }),
  dependencies: [AuditEventsRepo.Default, Authorization.Default]
}) {}
