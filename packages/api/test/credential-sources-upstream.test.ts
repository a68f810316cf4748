/**
 * Credential sources against the loopback Credential Gateway's answers that
 * credential-sources.test.ts does not drive through the API: 401 and 404 equivalents on
 * registration, each kind of failed status read (refused, 5xx, slower than `requestTimeoutMs`,
 * lost, a gateway that is down), and removals whose answer is refused, slow or lost, with the
 * gateway restarted before the repeat (SPEC 3, 4.6, 7.4; UPSTREAMS.md).
 */
import * as grpc from "@grpc/grpc-js"
import { afterAll, beforeEach, describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { startCredentialGateway } from "../../../testing/credentialGateway.js"
import { TestServer } from "../../../testing/server.js"
import { GATEWAY_TOKEN, gatewayInstallation, sourceRows } from "./support/credentialGatewayWorld.js"
import { apiTestLayer, expectData, expectError, seedAdmin, seedNamespace, send } from "./support/iamServer.js"

const gateway = await startCredentialGateway({ token: GATEWAY_TOKEN })
const SILENT = { state: "failed", reason: "The Credential Gateway did not answer." }
const REFUSED = { state: "failed", reason: "The Credential Gateway refused the status request." }

const world = (name: string) =>
  Effect.gen(function* () {
    const { baseUrl } = yield* TestServer
    const admin = yield* seedAdmin(`${name}@example.com`)
    const ns = yield* seedNamespace(name)
    const path = `/namespaces/${ns}/credential-sources`
    const call = (method: string, p: string, body?: unknown) => send(baseUrl, method, p, admin.headers, body)
    const secret = expectData(yield* call("POST", `/namespaces/${ns}/secrets`, { name: `${name}-key`, value: "sk-upstream-0123456789" }), 201)
    const body = { name: "vendor-key", type: "modelvendor", secrets: { api_key: { kind: "secret", namespaceId: ns, id: secret.id } } }
    const create = Effect.map(call("POST", path, body), (r) => expectData(r, 201) as { id: string })
    return { ns, path, call, body, create, secret }
  })

describe("Credential sources: every upstream answer", () => {
  beforeEach(() => gateway.reset())
  afterAll(() => gateway.stop())

  it.layer(apiTestLayer(gatewayInstallation(gateway)), { timeout: 120_000 })((it) => {
    it.effect("a registration refused with the 401 or 404 equivalent answers 503 and keeps nothing", () =>
      Effect.gen(function* () {
        const { path, call, body } = yield* world("csu-refused")
        for (const code of [grpc.status.UNAUTHENTICATED, grpc.status.NOT_FOUND]) {
          gateway.next("CreateProvider", { kind: "status", code })
          const refused = yield* call("POST", path, body)
          expectError(refused, 503, "DEPENDENCY_UNAVAILABLE")
          expect(refused.text).not.toContain("told to fail")
        }
        expect(yield* sourceRows).toEqual([])
        expect(expectData(yield* call("GET", path), 200)).toEqual([])
        expect(gateway.providers.size).toBe(0)
      }))

    it.effect("a Secret the Secret Driver cannot reveal answers 503 before the gateway is called, and keeps nothing (SPEC 7.4)", () =>
      Effect.gen(function* () {
        const { path, call, body, secret } = yield* world("csu-unreadable")
        const sql = yield* SqlClient.SqlClient
        // Sealed under a key this process does not hold (a retired or foreign key).
        yield* sql`UPDATE secrets SET key_id = 'retired-key' WHERE id = ${secret.id}`
        const refused = yield* call("POST", path, body)
        expectError(refused, 503, "DEPENDENCY_UNAVAILABLE")
        expect(refused.body.error.message).toBe("The Secret Driver cannot read a referenced Secret's value.")
        expect(yield* sourceRows).toEqual([])
        expect(gateway.calls).toEqual([])
      }))

    it.effect("a status read the gateway refuses, fails, answers too slowly or loses still succeeds, with a fixed reason", () =>
      Effect.gen(function* () {
        const { path, call, create } = yield* world("csu-status")
        const source = yield* create
        const status = Effect.map(call("GET", `${path}/${source.id}`), (r) => expectData(r, 200).status)
        for (const code of [grpc.status.UNAUTHENTICATED, grpc.status.PERMISSION_DENIED, grpc.status.RESOURCE_EXHAUSTED]) {
          gateway.next("GetProvider", { kind: "status", code })
          expect(yield* status).toEqual(REFUSED)
        }
        for (const code of [grpc.status.INTERNAL, grpc.status.UNAVAILABLE]) {
          gateway.next("GetProvider", { kind: "status", code })
          expect(yield* status).toEqual(SILENT)
        }
        gateway.next("GetProvider", { kind: "slow", ms: 1500 })
        expect(yield* status).toEqual(SILENT)
        // Lost: the gateway goes away mid-call; reads say so until it is back.
        gateway.next("GetProvider", { kind: "lost" })
        expect(yield* status).toEqual(SILENT)
        expect(yield* status).toEqual(SILENT)
        yield* Effect.promise(() => gateway.restart())
        // The channel may still be in its reconnect backoff (at most a second): a later read answers.
        let after: unknown = undefined
        for (let attempt = 0; attempt < 10 && !isReady(after); attempt++) {
          if (attempt > 0) yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 300)))
          after = yield* status
        }
        expect(after).toEqual({ state: "ready" })
        // Nothing a failed read saw changed the record.
        expect((yield* sourceRows).map((r) => r.state)).toEqual(["ready"])
        expect((yield* call("DELETE", `${path}/${source.id}`)).status).toBe(204)
      }))

    it.effect("a removal refused, slower than requestTimeoutMs or lost answers 503 and stays deleting; the repeat after a restart removes it", () =>
      Effect.gen(function* () {
        const { ns, path, call, create, secret } = yield* world("csu-remove")
        const sources = [yield* create, yield* create, yield* create]
        gateway.next("DeleteProvider", { kind: "status", code: grpc.status.PERMISSION_DENIED }, { kind: "slow", ms: 1500 }, { kind: "lost" })
        for (const source of sources) {
          expectError(yield* call("DELETE", `${path}/${source.id}`), 503, "DEPENDENCY_UNAVAILABLE")
        }
        expect((yield* sourceRows).map((r) => r.state)).toEqual(["deleting", "deleting", "deleting"])
        // The refused one is still at the gateway; the slow and the lost ones were removed there.
        expect([...gateway.providers.keys()]).toEqual([sources[0]!.id])
        expectError(yield* call("DELETE", `/namespaces/${ns}/secrets/${secret.id}`), 409, "RESOURCE_CONFLICT")
        // The gateway is down (the lost answer took it away): repeats still answer 503.
        expectError(yield* call("DELETE", `${path}/${sources[0]!.id}`), 503, "DEPENDENCY_UNAVAILABLE")
        yield* Effect.promise(() => gateway.restart())
        for (const source of sources) {
          let status = 0
          for (let attempt = 0; attempt < 10 && status !== 204; attempt++) {
            if (attempt > 0) yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 300)))
            status = (yield* call("DELETE", `${path}/${source.id}`)).status
          }
          expect(status).toBe(204)
        }
        expect(yield* sourceRows).toEqual([])
        expect(gateway.providers.size).toBe(0)
        // Nothing blocks the Secret and the Namespace any more.
        expect((yield* call("DELETE", `/namespaces/${ns}/secrets/${secret.id}`)).status).toBe(204)
        expect((yield* call("DELETE", `/namespaces/${ns}`)).status).toBe(202)
      }))
  })
})

const isReady = (status: unknown): boolean =>
  typeof status === "object" && status !== null && (status as { state?: unknown }).state === "ready"
