/**
 * One list page in one statement (issue 11, item 3). A list used to cost three statements
 * before its page: the decision on the parent, the parent's existence, then the page. Here the
 * decision and the existence check ride in the page's own statement (a one-row `gate` joined
 * laterally to the page), so a page is the credential lookup plus this: two statements.
 *
 * Policy is still read from storage on every request (SPEC 5.5): the gate is the same predicate
 * as `decide` (`allowedSql`). Only the allowed path is folded: when the gate says "not allowed",
 * `authorize` runs as before, so the answer (403 or 404), its reason and its audit record are
 * exactly those of an unfolded list.
 */
import { SqlClient, type Statement } from "@effect/sql"
import { type PageQuery, PgPool, runNamed } from "@svc/core/db"
import { DependencyUnavailable, NotFound } from "@svc/core/errors"
import { allowedSql, CurrentCaller, decide, type Permission, type ResourceRef } from "@svc/core/iam"
import { Effect } from "effect"
import { Authorization, type AuthorizationError } from "./authorize.js"
import { withExportedSpan } from "@svc/core/observability"

export interface PageGate {
  readonly permission: Permission
  readonly resource: ResourceRef
}

/** Any one of these suffices; a denial is the last one's (403 or 404, and its audit record). */
export interface AnyOfGate {
  readonly anyOf: readonly [...ReadonlyArray<PageGate>, PageGate]
}

export interface GatedPageRequest<A> {
  /** What the caller must hold before it may list, in the order SPEC checks them. */
  readonly gates: ReadonlyArray<PageGate | AnyOfGate>
  /** A SQL boolean: the resource the list is in exists; otherwise the request fails with `missing`. */
  readonly parentLive: Statement.Fragment
  readonly missing: () => NotFound
  /** The keyset page (its own WHERE, ORDER BY and LIMIT), with an `id` column. */
  readonly page: PageQuery<A>
}

interface GateRow {
  readonly svc_allowed: boolean
  readonly svc_live: boolean
  readonly id: unknown
}

const unavailable = (error: unknown) =>
  Effect.zipRight(
    Effect.logWarning("a list could not reach the database", error),
    Effect.fail(new DependencyUnavailable({ message: "The database is unavailable; retry later." }))
  )

export class GatedPages extends Effect.Service<GatedPages>()("@svc/api/GatedPages", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const pool = yield* PgPool
    const { authorize } = yield* Authorization

    // A named prepared statement per list shape: PostgreSQL plans the gate and the page once
    // per connection, not on every page (docs/decisions/performance.md).
    const select = <A>(allowed: Statement.Fragment, request: GatedPageRequest<A>) =>
      runNamed(pool, sql<GateRow>`
        WITH gate AS (SELECT ${allowed} AS svc_allowed, ${request.parentLive} AS svc_live)
        SELECT gate.svc_allowed, gate.svc_live, page.*
        FROM gate LEFT JOIN LATERAL (${request.page.statement}) AS page ON gate.svc_allowed AND gate.svc_live
        ORDER BY ${sql.unsafe(request.page.orderBy)}
      `).pipe(Effect.catchTag("SqlError", unavailable))

    /** The unfolded checks, for the rare path: the exact answer, reason and audit record. */
    const check = (gate: PageGate | AnyOfGate): Effect.Effect<void, AuthorizationError, CurrentCaller> =>
      Effect.gen(function* () {
        if (!("anyOf" in gate)) return yield* authorize(gate.permission, gate.resource)
        const caller = yield* CurrentCaller
        const last = gate.anyOf[gate.anyOf.length - 1]!
        for (const other of gate.anyOf.slice(0, -1)) {
          const decision = yield* decide(caller, other.permission, other.resource).pipe(
            Effect.provideService(SqlClient.SqlClient, sql),
            Effect.catchTag("SqlError", unavailable)
          )
          if (decision._tag === "Allowed") return
        }
        return yield* authorize(last.permission, last.resource)
      })

    const page = <A>(
      request: GatedPageRequest<A>
    ): Effect.Effect<ReadonlyArray<A>, AuthorizationError | NotFound, CurrentCaller> =>
      Effect.gen(function* () {
        const caller = yield* CurrentCaller
        const allowed = (gate: PageGate) => allowedSql(sql, caller, gate.permission, gate.resource)
        const gates = request.gates.map((gate) => ("anyOf" in gate ? sql.or(gate.anyOf.map(allowed)) : allowed(gate)))
        let rows = yield* select(gates.length === 0 ? sql`TRUE` : sql.and(gates), request)
        if (!rows[0]!.svc_allowed) {
          // A denial, or policy that changed between the two reads: `authorize` decides it.
          for (const gate of request.gates) yield* check(gate)
          rows = yield* select(sql`TRUE`, request)
        }
        if (!rows[0]!.svc_live) return yield* Effect.fail(request.missing())
        return yield* request.page.decode(rows.filter((row) => row.id !== null)).pipe(Effect.orDie)
      }).pipe(withExportedSpan("GatedPages.page"))

    return { page }
  }),
  dependencies: [Authorization.Default]
}) {}

/** The gate of a list inside a Namespace: `namespace:read` on it, and it must be live. */
export const inNamespace = (sql: SqlClient.SqlClient, namespaceId: string) => ({
  gates: [{ permission: "namespace:read", resource: { kind: "namespace", id: namespaceId } }] satisfies ReadonlyArray<PageGate>,
  parentLive: namespaceLive(sql, namespaceId),
  missing: () => new NotFound({ message: "The Namespace does not exist." })
})

/** SQL: the Namespace exists (a deleted Namespace's tombstone does not count, SPEC 3). */
export const namespaceLive = (sql: SqlClient.SqlClient, namespaceId: string) =>
  sql`EXISTS (SELECT 1 FROM namespaces WHERE id = ${namespaceId} AND status <> 'deleted')`
