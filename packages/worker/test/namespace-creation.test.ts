import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { createNamespace, NAMESPACE_PROVISION } from "@svc/core/tenancy"
import { Effect, Layer } from "effect"
import { WorkOutboxLive } from "../src/index.js"
import { TestDatabase } from "./harness.js"

class Rollback {
  readonly _tag = "Rollback"
}

const rows = (name: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const namespaces = yield* sql<{ id: string; status: string; existing_namespace: string | null }>`
      SELECT id, status, existing_namespace FROM namespaces WHERE name = ${name}
    `
    const work = yield* sql<{ kind: string; key: string; state: string; payload: unknown }>`
      SELECT w.kind, w.key, w.state, w.payload FROM work_items w JOIN namespaces n ON n.id = w.key WHERE n.name = ${name}
    `
    return { namespaces, work }
  })

// The Namespace creation path through the worker's outbox (the WorkOutbox port of @svc/core).
layer(Layer.merge(TestDatabase, WorkOutboxLive), { timeout: 60_000, excludeTestServices: true })(
  "createNamespace",
  (it) => {
    it.effect("inserts a provisioning Namespace and queues namespace.provision keyed by its id", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const created = yield* sql.withTransaction(createNamespace({ name: "alpha", existingNamespace: "ops-alpha" }))
        expect(created).toMatchObject({ name: "alpha", status: "provisioning", existingNamespace: "ops-alpha" })
        expect(created.id).toMatch(/^ns_[0-9a-f-]{36}$/)
        const { namespaces, work } = yield* rows("alpha")
        expect(namespaces).toEqual([{ id: created.id, status: "provisioning", existing_namespace: "ops-alpha" }])
        expect(work).toEqual([
          { kind: NAMESPACE_PROVISION, key: created.id, state: "queued", payload: { namespaceId: created.id } }
        ])
      }))

    it.effect("commits or rolls back with the caller's transaction: no Namespace, no work", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const outcome = yield* sql.withTransaction(
          Effect.zipRight(createNamespace({ name: "beta" }), Effect.fail(new Rollback()))
        ).pipe(Effect.flip)
        expect(outcome).toBeInstanceOf(Rollback)
        expect(yield* rows("beta")).toEqual({ namespaces: [], work: [] })
      }))

    it.effect("a live name is taken (NamespaceNameTaken, nothing queued); a deleted one is free again", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const first = yield* createNamespace({ name: "gamma" })
        const taken = yield* sql.withTransaction(createNamespace({ name: "gamma" })).pipe(Effect.flip)
        expect(taken._tag).toBe("NamespaceNameTaken")
        expect((yield* rows("gamma")).work).toHaveLength(1)
        yield* sql`UPDATE namespaces SET status = 'deleted' WHERE id = ${first.id}`
        const again = yield* createNamespace({ name: "gamma" })
        expect(again.id).not.toBe(first.id)
      }))
  }
)
