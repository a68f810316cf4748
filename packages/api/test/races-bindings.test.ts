/**
 * An AccessBinding created on a resource while that resource is deleted (SPEC 2.16, 4.7). A
 * resource's deletion removes the bindings on it; a binding committed beside the deletion must
 * not survive it naming a resource that no longer exists. Whichever commits first: the binding
 * is 201 and then removed with its resource, or the binding is 404 because the resource is gone.
 */
import { describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { BuiltinRoles } from "@svc/core/iam"
import { Effect } from "effect"
import { createServicePrincipal } from "../../../testing/identity.js"
import { TestServer } from "../../../testing/server.js"
import { expectData, expectError, apiTestLayer, seedAdmin, seedNamespace, send } from "./support/iamServer.js"
import { noServerErrors, race } from "./support/races.js"

// More rounds than elsewhere: the window is a few statements wide.
const ROUNDS = 25

const kinds = [
  { kind: "secret", collection: "secrets", table: "secrets", body: (round: number) => ({ name: `s-${round}`, value: "v" }) },
  { kind: "preset", collection: "presets", table: "presets", body: (round: number) => ({ name: `p-${round}`, template: {} }) },
  { kind: "configuration", collection: "configurations", table: "configurations", body: () => ({ kind: "agent", values: {} }) },
  // A binding is bindable too (its closure goes with it).
  {
    kind: "iam_access_binding",
    collection: "iam/access-bindings",
    table: "access_bindings",
    body: (_round: number, ns: string, principalId: string) =>
      ({ principalId, roleId: BuiltinRoles.namespaceEditor.id, resource: { kind: "namespace", id: ns } })
  }
] as const

describe("bindings racing the deletion of their resource", () => {
  it.layer(apiTestLayer(), { timeout: 120_000 })((it) => {
    for (const target of kinds) {
      it.effect(`a binding on a ${target.kind} being deleted never outlives it`, () =>
        Effect.gen(function* () {
          const { baseUrl } = yield* TestServer
          const sql = yield* SqlClient.SqlClient
          const admin = yield* seedAdmin(`race-bind-${target.kind}@example.com`)
          const ns = yield* seedNamespace(`race-bind-${target.kind}`)
          const principalId = yield* createServicePrincipal(`race-bind-${target.kind}`, ns)
          for (let round = 0; round < ROUNDS; round++) {
            const resource = expectData(yield* send(baseUrl, "POST", `/namespaces/${ns}/${target.collection}`, admin.headers, target.body(round, ns, principalId)), 201)
            const [bound, deleted] = yield* race([
              send(baseUrl, "POST", `/namespaces/${ns}/iam/access-bindings`, admin.headers, {
                principalId,
                roleId: BuiltinRoles.namespaceViewer.id,
                resource: { kind: target.kind, id: resource.id }
              }),
              send(baseUrl, "DELETE", `/namespaces/${ns}/${target.collection}/${resource.id}`, admin.headers)
            ])
            noServerErrors([bound!, deleted!])
            expect(deleted!.status, deleted!.text).toBe(204)
            if (bound!.status !== 201) expectError(bound!, 404, "NOT_FOUND")
            expect(yield* sql`SELECT id FROM access_bindings WHERE resource_kind = ${target.kind} AND resource_id = ${resource.id}`).toEqual([])
          }
          expect(yield* sql`
            SELECT b.id FROM access_bindings b LEFT JOIN ${sql(target.table)} t ON t.id = b.resource_id
            WHERE b.resource_kind = ${target.kind} AND t.id IS NULL
          `).toEqual([])
        }))
    }
  })
})
