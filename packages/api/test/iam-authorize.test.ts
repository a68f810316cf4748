/**
 * authorize() on its own: the 403/404 rules, and denials that stay audited when the handler's
 * transaction rolls back.
 */
import { describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { authorize } from "@svc/api"
import { BuiltinRoles, CurrentCaller, Installation } from "@svc/core/iam"
import { AgentId } from "@svc/core/schema"
import { Effect, Exit } from "effect"
import { migratedDatabaseLayer } from "../../../testing/database.js"
import { bindRole, createNamespaceRow, createServicePrincipal } from "../../../testing/identity.js"

const asCaller = (principalId: string, namespaceId: string | null = null) =>
  Effect.provideService(CurrentCaller, { principalId, kind: "service", namespaceId, credential: { _tag: "ServiceKey", keyId: "key_test" } })

const failureTag = <A, E extends { readonly _tag: string }>(exit: Exit.Exit<A, E>) =>
  Exit.isFailure(exit) && exit.cause._tag === "Fail" ? exit.cause.error._tag : Exit.isSuccess(exit) ? "Success" : "Other"

const denials = (principalId: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    return yield* sql<{ resource_kind: string; details: { permission: string; reason: string } }>`
      SELECT resource_kind, details FROM audit_events WHERE kind = 'authorization.denied' AND actor_principal_id = ${principalId} ORDER BY id
    `
  })

describe("authorize", () => {
  it.layer(migratedDatabaseLayer, { timeout: 120_000 })((it) => {
    it.effect("allowed, 403 when the resource is readable, 404 when it is not, 403 out of scope", () =>
      Effect.gen(function* () {
        const ns = yield* createNamespaceRow("authorize-a")
        const other = yield* createNamespaceRow("authorize-b")
        const viewer = yield* createServicePrincipal("authorize-viewer", ns)
        yield* bindRole(viewer, BuiltinRoles.namespaceViewer.id, { kind: "namespace", id: ns })
        const agent = { kind: "agent" as const, id: AgentId.make(), namespaceId: ns }
        expect(failureTag(yield* Effect.exit(authorize("agent:read", agent).pipe(asCaller(viewer, ns))))).toBe("Success")
        expect(failureTag(yield* Effect.exit(authorize("agent:update", agent).pipe(asCaller(viewer, ns))))).toBe("Forbidden")
        expect(failureTag(yield* Effect.exit(authorize("secret:update", { kind: "secret", id: "sec_x", namespaceId: ns }).pipe(asCaller(viewer, ns)))))
          .toBe("Forbidden")
        expect(failureTag(yield* Effect.exit(authorize("iam_role:read", { kind: "iam_role", id: "role_x", namespaceId: ns }).pipe(asCaller(viewer, ns)))))
          .toBe("NotFound")
        expect(failureTag(yield* Effect.exit(authorize("agent:read", { ...agent, namespaceId: other }).pipe(asCaller(viewer, ns))))).toBe("Forbidden")
        expect(failureTag(yield* Effect.exit(authorize("installation:read", Installation).pipe(asCaller(viewer, ns))))).toBe("Forbidden")
        expect((yield* denials(viewer)).map((row) => row.details.reason)).toEqual(["no-grant", "no-grant", "no-grant", "out-of-scope", "out-of-scope"])
      }))

    it.effect("a denial inside a transaction is still audited after the rollback", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const principal = yield* createServicePrincipal("authorize-tx")
        const exit = yield* sql.withTransaction(
          Effect.gen(function* () {
            yield* sql`INSERT INTO principals (id, kind, name) VALUES ('sp_rolled-back', 'service', 'rolled back')`
            yield* authorize("installation:administer", Installation)
          })
        ).pipe(asCaller(principal), Effect.exit)
        expect(failureTag(exit)).toBe("Forbidden")
        expect(yield* sql`SELECT 1 FROM principals WHERE id = 'sp_rolled-back'`).toEqual([])
        expect(yield* denials(principal)).toEqual([
          { resource_kind: "installation", details: { permission: "installation:administer", reason: "no-grant" } }
        ])
      }))
  })
})
