import { describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { defaultInstallationConfig, InstallationConfiguration, type LoadedProcessConfig, ProcessConfiguration } from "@svc/core/config"
import * as Compute from "@svc/core/drivers/compute"
import { namespaceDirectory } from "@svc/core/drivers/compute"
import { BuiltinRoles } from "@svc/core/iam"
import { NamespaceId } from "@svc/core/schema"
import { WorkerLive } from "@svc/worker"
import { Duration, Effect, Layer } from "effect"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { bindRole, createServicePrincipal } from "../../../testing/identity.js"
import { TestServer } from "../../../testing/server.js"
import {
  apiTestLayer,
  auditKinds,
  expectData,
  expectError,
  expectNamespaceRefused,
  seedAdmin,
  seedHuman,
  seedNamespaceCreator,
  send,
  TIMESTAMP,
  until
} from "./support/iamServer.js"

const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "svc-api-ns-"))

// The API and the REAL worker engine (WorkerLive: its driver chosen from the configuration).
const layer = WorkerLive({ pollInterval: Duration.millis(100) }).pipe(
  Layer.provide(Compute.layerFromConfiguration),
  Layer.provide(Layer.succeed(InstallationConfiguration, defaultInstallationConfig)),
  Layer.provide(Layer.succeed(ProcessConfiguration, { dataDir } as LoadedProcessConfig)),
  Layer.provideMerge(apiTestLayer())
)

const NS_ID = /^ns_[0-9a-f-]{36}$/

const exists = (p: string) => Effect.promise(() => fs.stat(p).then((s) => s.mode & 0o777, () => undefined))

describe("Namespaces", () => {
  it.layer(layer, { timeout: 120_000 })((it) => {
    it.effect("create → provisioning → ready (a 0700 runtime directory); delete → deleting → tombstone: 404 and not listed", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdmin("ns-admin@example.com")
        const created = expectData(yield* send(baseUrl, "POST", "/namespaces", admin.headers, { name: "team-a" }), 201)
        expect(created).toEqual({
          id: expect.stringMatching(NS_ID),
          name: "team-a",
          status: "provisioning",
          createdAt: expect.stringMatching(TIMESTAMP),
          updatedAt: expect.stringMatching(TIMESTAMP)
        })
        const get = send(baseUrl, "GET", `/namespaces/${created.id}`, admin.headers)
        const ready = yield* until(get, (r) => r.body?.data?.status === "ready")
        expect(ready.status).toBe(200)
        expect(yield* exists(namespaceDirectory(dataDir, created.id))).toBe(0o700)
        const listed = expectData(yield* send(baseUrl, "GET", "/namespaces", admin.headers), 200)
        expect(listed.map((n: { id: string }) => n.id)).toContain(created.id)

        const deleting = expectData(yield* send(baseUrl, "DELETE", `/namespaces/${created.id}`, admin.headers), 202)
        expect(deleting).toMatchObject({ id: created.id, status: "deleting" })
        const gone = yield* until(get, (r) => r.status === 404)
        expectError(gone, 404, "NOT_FOUND")
        expect(expectData(yield* send(baseUrl, "GET", "/namespaces", admin.headers), 200).map((n: { id: string }) => n.id))
          .not.toContain(created.id)
        expect(yield* exists(namespaceDirectory(dataDir, created.id))).toBeUndefined()
        expectError(yield* send(baseUrl, "DELETE", `/namespaces/${created.id}`, admin.headers), 404, "NOT_FOUND")
        // The name is free again.
        expectData(yield* send(baseUrl, "POST", "/namespaces", admin.headers, { name: "team-a" }), 201)
        const audit = yield* auditKinds(created.id)
        expect(audit.map((row) => [row.kind, row.actor_principal_id])).toEqual([
          ["namespace.created", admin.principalId],
          ["namespace.deleted", admin.principalId]
        ])
      }))

    it.effect("the 201 is the Namespace as created (provisioning), however soon after the commit it moves on", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const sql = yield* SqlClient.SqlClient
        const admin = yield* seedAdmin("ns-instant@example.com")
        // A worker as fast as can be: the Namespace is ready the moment its creation commits.
        yield* sql.unsafe(`
          CREATE FUNCTION svc_test_instantly_ready() RETURNS trigger LANGUAGE plpgsql AS $$
          BEGIN
            UPDATE namespaces SET status = 'ready' WHERE id = NEW.id;
            RETURN NULL;
          END $$
        `)
        yield* sql.unsafe(`
          CREATE CONSTRAINT TRIGGER svc_test_instantly_ready AFTER INSERT ON namespaces
          DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN (NEW.name LIKE 'instant-%')
          EXECUTE FUNCTION svc_test_instantly_ready()
        `)
        yield* Effect.gen(function* () {
          const created = expectData(yield* send(baseUrl, "POST", "/namespaces", admin.headers, { name: "instant-a" }), 201)
          expect(created).toMatchObject({ name: "instant-a", status: "provisioning" })
          const now = expectData(yield* send(baseUrl, "GET", `/namespaces/${created.id}`, admin.headers), 200)
          expect(now.status).not.toBe("provisioning")
        }).pipe(
          Effect.ensuring(
            Effect.orDie(
              Effect.zipRight(
                sql.unsafe("DROP TRIGGER svc_test_instantly_ready ON namespaces"),
                sql.unsafe("DROP FUNCTION svc_test_instantly_ready()")
              )
            )
          )
        )
      }))

    it.effect("a repeated DELETE changes nothing and queues no second teardown", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const sql = yield* SqlClient.SqlClient
        const admin = yield* seedAdmin("ns-repeat@example.com")
        const created = expectData(yield* send(baseUrl, "POST", "/namespaces", admin.headers, { name: "repeat" }), 201)
        // Held in `deleting` (as if the worker were slow): the row lock is not needed for this.
        yield* sql`UPDATE namespaces SET status = 'deleting' WHERE id = ${created.id}`
        const first = expectData(yield* send(baseUrl, "DELETE", `/namespaces/${created.id}`, admin.headers), 202)
        const second = expectData(yield* send(baseUrl, "DELETE", `/namespaces/${created.id}`, admin.headers), 202)
        expect(second).toEqual(first)
        const teardowns = yield* sql`SELECT 1 FROM work_items WHERE kind = 'namespace.teardown' AND key = ${created.id}`
        expect(teardowns).toHaveLength(0)
        expect((yield* auditKinds(created.id)).map((row) => row.kind)).toEqual(["namespace.created"])
      }))

    it.effect("a DELETE after the teardown gave up retries it (an event of its own); the Namespace is then removed", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const sql = yield* SqlClient.SqlClient
        const admin = yield* seedAdmin("ns-retry@example.com")
        const created = expectData(yield* send(baseUrl, "POST", "/namespaces", admin.headers, { name: "retry" }), 201)
        // As after a permanent driver failure or a deadline: `deleting`, its only teardown failed.
        yield* sql`UPDATE namespaces SET status = 'deleting' WHERE id = ${created.id}`
        yield* sql`
          INSERT INTO work_items (id, kind, key, payload, state, deadline_at, finished_at,
            last_attempt_at, last_attempt_code, last_attempt_message)
          VALUES (gen_random_uuid(), 'namespace.teardown', ${created.id}, ${JSON.stringify({ namespaceId: created.id })}::jsonb,
            'failed', now(), now(), now(), 'DEADLINE_EXCEEDED', 'The work ran out of time.')
        `
        const retried = expectData(yield* send(baseUrl, "DELETE", `/namespaces/${created.id}`, admin.headers), 202)
        expect(retried).toMatchObject({ id: created.id, status: "deleting" })
        const teardowns = yield* sql<{ state: string }>`
          SELECT state FROM work_items WHERE kind = 'namespace.teardown' AND key = ${created.id} ORDER BY created_at
        `
        // The failed one stays; the new one is queued, or already run by the worker.
        expect(teardowns).toHaveLength(2)
        expect(teardowns[0]!.state).toBe("failed")
        expect((yield* auditKinds(created.id)).map((row) => [row.kind, row.actor_principal_id])).toEqual([
          ["namespace.created", admin.principalId],
          ["namespace.deletion-retried", admin.principalId]
        ])
        const gone = yield* until(send(baseUrl, "GET", `/namespaces/${created.id}`, admin.headers), (r) => r.status === 404)
        expectError(gone, 404, "NOT_FOUND")
      }))

    it.effect("error paths: duplicate name, existingNamespace on local, invalid body, not empty, not found, forbidden", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdmin("ns-errors@example.com")
        const human = yield* seedHuman("ns-nobody@example.com")
        const created = expectData(yield* send(baseUrl, "POST", "/namespaces", admin.headers, { name: "errors" }), 201)
        expectError(yield* send(baseUrl, "POST", "/namespaces", admin.headers, { name: "errors" }), 409, "RESOURCE_CONFLICT")
        expectError(
          yield* send(baseUrl, "POST", "/namespaces", admin.headers, { name: "bound", existingNamespace: "ops-ns" }),
          409,
          "RESOURCE_CONFLICT"
        )
        // The body is checked first: a name that is no Kubernetes namespace is 400 on every driver.
        expectError(
          yield* send(baseUrl, "POST", "/namespaces", admin.headers, { name: "bound", existingNamespace: "../ops-ns" }),
          400,
          "INVALID_REQUEST",
          [{ code: "INVALID_FORMAT", path: "/existingNamespace" }]
        )
        // installation:administer is checked before the driver: a caller with only namespace:create is 403.
        const creator = yield* seedNamespaceCreator("ns-creator@example.com")
        const asCreator = yield* send(baseUrl, "POST", "/namespaces", creator.headers, { name: "bound", existingNamespace: "ops-ns" })
        yield* expectNamespaceRefused(asCreator, 403, "FORBIDDEN", "bound")
        expectError(yield* send(baseUrl, "POST", "/namespaces", admin.headers, { name: "" }), 400, "INVALID_REQUEST")
        expectError(yield* send(baseUrl, "POST", "/namespaces", admin.headers, { name: "x", extra: 1 }), 400, "INVALID_REQUEST")
        // A Secret keeps it from being deleted; so does a Namespace-scoped service principal.
        const secretNs = expectData(yield* send(baseUrl, "POST", "/namespaces", admin.headers, { name: "with-secret" }), 201)
        expectData(yield* send(baseUrl, "POST", `/namespaces/${secretNs.id}/secrets`, admin.headers, { name: "s", value: "v" }), 201)
        expectError(yield* send(baseUrl, "DELETE", `/namespaces/${secretNs.id}`, admin.headers), 409, "NAMESPACE_NOT_EMPTY")
        // So does a Preset, until it is deleted.
        const presetNs = expectData(yield* send(baseUrl, "POST", "/namespaces", admin.headers, { name: "with-preset" }), 201)
        const preset = expectData(
          yield* send(baseUrl, "POST", `/namespaces/${presetNs.id}/presets`, admin.headers, { name: "p", template: {} }),
          201
        )
        expectError(yield* send(baseUrl, "DELETE", `/namespaces/${presetNs.id}`, admin.headers), 409, "NAMESPACE_NOT_EMPTY")
        expect((yield* send(baseUrl, "DELETE", `/namespaces/${presetNs.id}/presets/${preset.id}`, admin.headers)).status).toBe(204)
        expect(expectData(yield* send(baseUrl, "DELETE", `/namespaces/${presetNs.id}`, admin.headers), 202).status).toBe("deleting")
        yield* createServicePrincipal("automation", created.id)
        expectError(yield* send(baseUrl, "DELETE", `/namespaces/${created.id}`, admin.headers), 409, "NAMESPACE_NOT_EMPTY")
        expectError(yield* send(baseUrl, "GET", `/namespaces/${NamespaceId.make()}`, admin.headers), 404, "NOT_FOUND")
        // No grant: create is 403, the existing Namespace is hidden (404), the list is empty.
        expectError(yield* send(baseUrl, "POST", "/namespaces", human.headers, { name: "nope" }), 403, "FORBIDDEN")
        expectError(yield* send(baseUrl, "GET", `/namespaces/${created.id}`, human.headers), 404, "NOT_FOUND")
        expectError(yield* send(baseUrl, "DELETE", `/namespaces/${created.id}`, human.headers), 404, "NOT_FOUND")
        expect(expectData(yield* send(baseUrl, "GET", "/namespaces", human.headers), 200)).toEqual([])
        // A viewer of one Namespace lists exactly that one, and cannot delete it.
        yield* bindRole(human.principalId, BuiltinRoles.namespaceViewer.id, { kind: "namespace", id: created.id })
        expect(expectData(yield* send(baseUrl, "GET", "/namespaces", human.headers), 200).map((n: { id: string }) => n.id)).toEqual([
          created.id
        ])
        expectError(yield* send(baseUrl, "DELETE", `/namespaces/${created.id}`, human.headers), 403, "FORBIDDEN")
      }))
  })
})
