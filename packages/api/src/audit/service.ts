/**
 * Reading the audit trail (DESIGN §18, docs/decisions/audit-api.md): authorization, then one
 * keyset page. Entries carry what `AuditLog` recorded: ids and facts, never a secret value.
 */
import type { AuditEntry, AuditPage, AuditQuery } from "@svc/core/api"
import { AUDIT_PAGE_DEFAULT } from "@svc/core/api"
import { type AuditEventFilter, type AuditEventRow, AuditEventsRepo } from "@svc/core/db"
import { InvalidRequest, NotFound } from "@svc/core/errors"
import { Installation } from "@svc/core/iam"
import type { NamespaceId } from "@svc/core/schema"
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { GatedPages, type GatedPageRequest } from "../auth/gatedPage.js"
import { namespaceRef } from "../iam/access.js"
import { decodeCursor, encodeCursor } from "./cursor.js"
import { exportedFn } from "@svc/core/observability"

type Details = AuditEntry["details"]

const noNamespace = () => new NotFound({ message: "The Namespace does not exist." })

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
    const pages = yield* GatedPages

    const page = (query: AuditQuery, namespaceId: NamespaceId | undefined, gates: GatedPageRequest<unknown>["gates"]) =>
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
        // A deleted Namespace's audit trail stays readable: nothing is "missing" here.
        const rows = yield* pages.page({ gates, parentLive: sql`TRUE`, missing: noNamespace, page: repo.page(filter) })
        const shown = rows.slice(0, limit)
        const last = shown[shown.length - 1]
        const nextCursor = rows.length > limit && last !== undefined ? encodeCursor({ at: last.at_key, id: last.id }) : null
        return { entries: shown.map(toEntry), nextCursor } satisfies AuditPage
      })

    const list = exportedFn("Audit.list")(function* (query: AuditQuery) {
      return yield* page(query, undefined, [{ permission: "installation:administer", resource: Installation }])
    })

    /**
     * `namespace:read` first (404 when the caller cannot see the Namespace), then
     * `namespace:administer` on it, which an Installation administrator holds implicitly.
     */
    const listNamespace = exportedFn("Audit.listNamespace")(function* (namespaceId: NamespaceId, query: AuditQuery) {
      return yield* page(query, namespaceId, [
        { permission: "namespace:read", resource: namespaceRef(namespaceId) },
        {
          anyOf: [
            { permission: "installation:administer", resource: Installation },
            { permission: "namespace:administer", resource: namespaceRef(namespaceId) }
          ]
        }
      ])
    })

    return { list, listNamespace } as const
  }),
  dependencies: [AuditEventsRepo.Default, GatedPages.Default]
}) {}
