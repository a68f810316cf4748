/**
 * SPEC 4's path parameter shapes that are wider than the ids we issue: `{workId}` is 1-200
 * characters of `[A-Za-z0-9._~:@/-]` (ours are `wrk_<uuidv4>`), `{serviceAccountId}` is `sa_<id>`
 * (ours are `sa_<uuidv4>`). An id of the shape that is not ours names nothing: 404, like an
 * unknown id of ours; outside the shape, 400 INVALID_REQUEST at the parameter. Nothing is written.
 */
import { describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { ServiceAccountId, WorkId } from "@svc/core/schema"
import { Effect } from "effect"
import { TestServer } from "../../../testing/server.js"
import { apiTestLayer, expectError, seedAdmin, seedNamespace, send } from "./support/iamServer.js"

const counts = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const [row] = yield* sql<{ records: string; work: string; accounts: string; audit: string }>`
    SELECT (SELECT count(*) FROM agent_provisioning) AS records, (SELECT count(*) FROM work_items) AS work,
           (SELECT count(*) FROM service_accounts) AS accounts, (SELECT count(*) FROM audit_events) AS audit`
  return row
})

describe("the provisioning work id in the path (SPEC 4)", () => {
  it.layer(apiTestLayer(), { timeout: 120_000 })((it) => {
    it.effect("an id of SPEC's shape that is not ours is 404 for GET and retry, as an unknown wrk_ id is", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdmin("provisioning-path@example.com")
        const ns = yield* seedNamespace("provisioning-path")
        const before = yield* counts
        const ids = [WorkId.make(), "job-1", "a", "team:x@y.z~1", "x".repeat(200), "deploy%2Fnightly"]
        for (const id of ids) {
          expectError(yield* send(baseUrl, "GET", `/namespaces/${ns}/agents/provision/${id}`, admin.headers), 404, "NOT_FOUND")
          expectError(yield* send(baseUrl, "POST", `/namespaces/${ns}/agents/provision/${id}/retry`, admin.headers), 404, "NOT_FOUND")
        }
        expect(yield* counts).toEqual(before)
      }))

    it.effect("outside SPEC's shape: 400 INVALID_REQUEST naming the parameter", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdmin("provisioning-path-bad@example.com")
        const ns = yield* seedNamespace("provisioning-path-bad")
        for (const [id, code] of [["has%20space", "INVALID_FORMAT"], ["a+b", "INVALID_FORMAT"], ["a*b", "INVALID_FORMAT"], ["x".repeat(201), "TOO_LONG"]] as const) {
          expectError(yield* send(baseUrl, "GET", `/namespaces/${ns}/agents/provision/${id}`, admin.headers), 400, "INVALID_REQUEST", [
            { code, path: "/workId" }
          ])
        }
      }))

    it.effect("a service account id of the shape sa_<id> that is not ours is 404 on every account route; others 400", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdmin("account-path@example.com")
        const ns = yield* seedNamespace("account-path")
        const before = yield* counts
        for (const id of [ServiceAccountId.make(), "sa_build-bot", "sa_1", `sa_${"x".repeat(197)}`]) {
          const base = `/namespaces/${ns}/service-accounts/${id}`
          expectError(yield* send(baseUrl, "GET", base, admin.headers), 404, "NOT_FOUND")
          expectError(yield* send(baseUrl, "POST", `${base}/credentials`, admin.headers, {}), 404, "NOT_FOUND")
          expectError(yield* send(baseUrl, "PATCH", `${base}/credential`, admin.headers, { kind: "api_key", secretRef: { name: "s", key: "value" } }), 404, "NOT_FOUND")
          expectError(yield* send(baseUrl, "DELETE", base, admin.headers), 404, "NOT_FOUND")
        }
        expect(yield* counts).toEqual(before)
        for (const [id, code] of [["acct_1", "INVALID_FORMAT"], ["sa_", "INVALID_FORMAT"], ["sa_a+b", "INVALID_FORMAT"], [`sa_${"x".repeat(198)}`, "TOO_LONG"]] as const) {
          expectError(yield* send(baseUrl, "GET", `/namespaces/${ns}/service-accounts/${id}`, admin.headers), 400, "INVALID_REQUEST", [
            { code, path: "/serviceAccountId" }
          ])
        }
      }))
  })
})
