import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { defaultInstallationConfig, InstallationConfiguration, type LoadedProcessConfig, ProcessConfiguration } from "@svc/core/config"
import { NamespacesRepo } from "@svc/core/db"
import * as Compute from "@svc/core/drivers/compute"
import { NamespaceId } from "@svc/core/schema"
import { createNamespace, NAMESPACE_PROVISION, NAMESPACE_TEARDOWN } from "@svc/core/tenancy"
import { Effect, Layer } from "effect"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { enqueue, NamespaceReconcilersLive, WorkOutboxLive } from "../src/index.js"
import { eventually, itemsOfKind, startEngine, TestDatabase, untilState } from "./harness.js"

const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "svc-ns-"))

const namespaceRow = (id: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ status: string }>`SELECT status FROM namespaces WHERE id = ${id}`
    return rows[0]?.status
  })

const mode = (p: string) => Effect.promise(() => fs.stat(p)).pipe(Effect.map((s) => s.mode & 0o777))
const exists = (p: string) => Effect.promise(() => fs.stat(p).then(() => true, () => false))

// The driver is chosen from the Installation configuration, as the worker's main.ts does.
const SelectedCompute = Compute.layerFromConfiguration.pipe(
  Layer.provide(Layer.succeed(InstallationConfiguration, defaultInstallationConfig)),
  Layer.provide(Layer.succeed(ProcessConfiguration, { dataDir } as LoadedProcessConfig))
)

// The repository is provided as WorkerLive provides it.
const handlers = NamespaceReconcilersLive.pipe(Layer.provide(SelectedCompute), Layer.provide(NamespacesRepo.Default))
const fast = { workerId: "ns-test", pollInterval: "100 millis" } as const

layer(Layer.mergeAll(TestDatabase, WorkOutboxLive), { timeout: 60_000, excludeTestServices: true })(
  "Namespace reconcilers with the real engine and the local Compute Driver",
  (it) => {
    it.scoped("provision: provisioning → a 0700 runtime directory → ready; teardown: deleting → removed → deleted", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        yield* startEngine(fast, handlers)
        const created = yield* sql.withTransaction(createNamespace({ name: "reconciled" }))
        yield* eventually(namespaceRow(created.id), (s) => s === "ready")
        const dir = Compute.namespaceDirectory(dataDir, created.id)
        expect(yield* mode(dir)).toBe(0o700)
        // The handler commits "ready" before the engine records the attempt's outcome, so the
        // item's terminal state is awaited rather than read once.
        const [provision] = (yield* itemsOfKind(NAMESPACE_PROVISION)).filter((i) => i.key === created.id)
        expect((yield* untilState(provision!.id, "succeeded", "failed")).state).toBe("succeeded")

        yield* sql.withTransaction(
          Effect.zipRight(
            sql`UPDATE namespaces SET status = 'deleting' WHERE id = ${created.id}`,
            enqueue({ kind: NAMESPACE_TEARDOWN, key: created.id, payload: { namespaceId: created.id } })
          )
        )
        yield* eventually(namespaceRow(created.id), (s) => s === "deleted")
        expect(yield* exists(dir)).toBe(false)
      }))

    it.scoped("a provision that finds the Namespace deleting does nothing; a teardown of a tombstone succeeds", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const created = yield* sql.withTransaction(createNamespace({ name: "raced" }))
        yield* sql`UPDATE namespaces SET status = 'deleting' WHERE id = ${created.id}`
        yield* startEngine({ ...fast, workerId: "ns-test-2" }, handlers)
        const [provision] = (yield* itemsOfKind(NAMESPACE_PROVISION)).filter((i) => i.key === created.id)
        yield* untilState(provision!.id, "succeeded")
        expect(yield* namespaceRow(created.id)).toBe("deleting")
        expect(yield* exists(Compute.namespaceDirectory(dataDir, created.id))).toBe(false)
        yield* enqueue({ kind: NAMESPACE_TEARDOWN, key: created.id, payload: { namespaceId: created.id } })
        yield* eventually(namespaceRow(created.id), (s) => s === "deleted")
        const first = (yield* itemsOfKind(NAMESPACE_TEARDOWN)).find((i) => i.key === created.id)
        yield* untilState(first!.id, "succeeded")
        const again = yield* enqueue({ kind: NAMESPACE_TEARDOWN, key: created.id, payload: { namespaceId: created.id } })
        expect(again.created).toBe(true)
        const done = yield* untilState(again.item.id, "succeeded", "failed")
        expect(done.state).toBe("succeeded")
      }))

    it.scoped("teardown removes the Namespace's own policy (Roles, AccessBindings, Restrictions) with the tombstone; another Namespace's stays", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        yield* startEngine({ ...fast, workerId: "ns-test-policy" }, handlers)
        const doomed = yield* sql.withTransaction(createNamespace({ name: "policy-doomed" }))
        const kept = yield* sql.withTransaction(createNamespace({ name: "policy-kept" }))
        const principal = `prn_${crypto.randomUUID()}`
        yield* sql`INSERT INTO principals (id, kind, name) VALUES (${principal}, 'human', 'policy holder')`
        // What DELETE /namespaces does not wait for: the Namespace's custom Roles, bindings in it
        // (on the Namespace and on an exact resource) and a Restriction on it.
        const seed = (ns: string) =>
          Effect.gen(function* () {
            const role = `role_${crypto.randomUUID()}`
            yield* sql`INSERT INTO roles (id, namespace_id, name, permissions) VALUES (${role}, ${ns}, 'custom', ${["secret:read"]})`
            yield* sql`INSERT INTO access_bindings (id, principal_id, role_id, resource_kind, resource_id, namespace_id) VALUES
              (${`bnd_${crypto.randomUUID()}`}, ${principal}, ${role}, 'namespace', ${ns}, ${ns}),
              (${`bnd_${crypto.randomUUID()}`}, ${principal}, ${role}, 'secret', ${`sec_${crypto.randomUUID()}`}, ${ns})`
            yield* sql`INSERT INTO restrictions (id, principal_id, permission, resource_kind, resource_id)
              VALUES (${`rst_${crypto.randomUUID()}`}, ${principal}, '*', 'namespace', ${ns})`
          })
        yield* seed(doomed.id)
        yield* seed(kept.id)
        const policy = (ns: string) =>
          sql<{ roles: number; bindings: number; restrictions: number }>`
            SELECT (SELECT count(*)::int FROM roles WHERE namespace_id = ${ns}) AS roles,
              (SELECT count(*)::int FROM access_bindings WHERE namespace_id = ${ns}) AS bindings,
              (SELECT count(*)::int FROM restrictions WHERE resource_kind = 'namespace' AND resource_id = ${ns}) AS restrictions
          `.pipe(Effect.map((rows) => rows[0]))
        expect(yield* policy(doomed.id)).toEqual({ roles: 1, bindings: 2, restrictions: 1 })
        yield* eventually(namespaceRow(doomed.id), (s) => s === "ready")
        yield* sql.withTransaction(
          Effect.zipRight(
            sql`UPDATE namespaces SET status = 'deleting' WHERE id = ${doomed.id}`,
            enqueue({ kind: NAMESPACE_TEARDOWN, key: doomed.id, payload: { namespaceId: doomed.id } })
          )
        )
        yield* eventually(namespaceRow(doomed.id), (s) => s === "deleted")
        expect(yield* policy(doomed.id)).toEqual({ roles: 0, bindings: 0, restrictions: 0 })
        expect(yield* policy(kept.id)).toEqual({ roles: 1, bindings: 2, restrictions: 1 })
      }))

    it.scoped("an existingNamespace on local compute fails permanently: Namespace failed, item failed with the code", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        yield* startEngine({ ...fast, workerId: "ns-test-3" }, handlers)
        const created = yield* sql.withTransaction(createNamespace({ name: "operator", existingNamespace: "ops" }))
        yield* eventually(namespaceRow(created.id), (s) => s === "failed")
        const [provision] = (yield* itemsOfKind(NAMESPACE_PROVISION)).filter((i) => i.key === created.id)
        const item = yield* untilState(provision!.id, "failed")
        expect(item.lastAttempt?.code).toBe(Compute.LocalComputeCodes.EXISTING_NAMESPACE_UNSUPPORTED)
      }))

    it.scoped("provisioning retried past its deadline fails the item DEADLINE_EXCEEDED and the Namespace with it; a Namespace no longer provisioning is left alone", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const created = yield* sql.withTransaction(createNamespace({ name: "never-provisioned" }))
        // A file where its runtime directory goes: the driver's mkdir fails, a transient failure.
        yield* Effect.promise(() => fs.mkdir(Compute.namespacesRoot(dataDir), { recursive: true }))
        yield* Effect.promise(() => fs.writeFile(Compute.namespaceDirectory(dataDir, created.id), "in the way"))
        const [provision] = (yield* itemsOfKind(NAMESPACE_PROVISION)).filter((i) => i.key === created.id)
        yield* sql`UPDATE work_items SET deadline_at = now() + interval '2 seconds' WHERE id = ${provision!.id}`
        yield* startEngine({ ...fast, workerId: "ns-test-deadline", backoff: { base: "100 millis", cap: "300 millis" } }, handlers)
        const item = yield* untilState(provision!.id, "failed")
        expect(item.lastAttempt?.code).toBe("DEADLINE_EXCEEDED")
        expect(item.attemptCount).toBeGreaterThan(1)
        expect(yield* namespaceRow(created.id)).toBe("failed")

        // Any writer that fails the item moves only a Namespace still provisioning.
        const ready = yield* sql.withTransaction(createNamespace({ name: "already-ready" }))
        const [readyItem] = (yield* itemsOfKind(NAMESPACE_PROVISION)).filter((i) => i.key === ready.id)
        yield* untilState(readyItem!.id, "succeeded")
        expect(yield* namespaceRow(ready.id)).toBe("ready")
        yield* sql`UPDATE work_items SET state = 'failed' WHERE id = ${readyItem!.id}`
        expect(yield* namespaceRow(ready.id)).toBe("ready")
      }))
  }
)

layer(Layer.empty)("local Compute Driver, Namespace half", (it) => {
  it.effect("create and remove are idempotent, fix the mode, and survive a new driver instance", () =>
    Effect.gen(function* () {
      const dir = yield* Effect.promise(() => fs.mkdtemp(path.join(os.tmpdir(), "svc-local-")))
      const id = NamespaceId.make()
      const runtime = { id }
      const first = Compute.makeLocalCompute(dir)
      yield* first.provisionNamespace(runtime)
      const nsDir = Compute.namespaceDirectory(dir, id)
      yield* Effect.promise(() => fs.chmod(nsDir, 0o755))
      yield* Effect.promise(() => fs.writeFile(path.join(nsDir, "state"), "kept"))
      // A restart: a new instance over the same data dir finds and keeps the directory.
      const second = Compute.makeLocalCompute(dir)
      yield* second.provisionNamespace(runtime)
      expect(yield* mode(nsDir)).toBe(0o700)
      expect(yield* Effect.promise(() => fs.readFile(path.join(nsDir, "state"), "utf8"))).toBe("kept")
      yield* second.teardownNamespace(runtime)
      yield* second.teardownNamespace(runtime)
      expect(yield* exists(nsDir)).toBe(false)
    }))

  it.effect("never removes an operator-owned directory; the Agent half treats a missing gateway as stopped", () =>
    Effect.gen(function* () {
      const dir = yield* Effect.promise(() => fs.mkdtemp(path.join(os.tmpdir(), "svc-local-")))
      const id = NamespaceId.make()
      const driver = Compute.makeLocalCompute(dir)
      yield* driver.provisionNamespace({ id })
      const nsDir = Compute.namespaceDirectory(dir, id)
      yield* driver.teardownNamespace({ id, existingNamespace: "ops" })
      expect(yield* exists(nsDir)).toBe(true)
      const rejected = yield* Effect.flip(driver.provisionNamespace({ id, existingNamespace: "ops" }))
      expect(rejected).toMatchObject({ _tag: "ComputeFailure", code: "EXISTING_NAMESPACE_UNSUPPORTED", permanent: true })
      expect(driver.supportsExistingNamespace).toBe(false)
      const ref = { namespaceId: id, agentId: "agt", revisionId: "rev" }
      yield* driver.stopGateway(ref)
      expect(yield* driver.gatewayHealth(ref)).toBe("absent")
    }))
})
