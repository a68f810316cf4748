/**
 * Hostile query strings on every list endpoint: the keyset pages' `limit` and `after`, and the
 * audit API's `limit`, `cursor`, `since`, `until`, `actor`, `kind`, `resourceKind`, `resourceId`
 * and `outcome` (DESIGN §18), with repeated and unknown keys, raw percent-escapes of arbitrary bytes,
 * over-long values and date-times at and past every limit, from the fixed seed of
 * support/fuzzBodies.ts. Each answer is a 200 list, or a 400 INVALID_REQUEST envelope whose
 * details all point at a parameter that was sent (or a 431 envelope for a head over 16 KiB);
 * never a 5xx; nothing is written.
 */
import { describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { Effect, Runtime } from "effect"
import fc from "fast-check"
import { TestServer } from "../../../testing/server.js"
import { RUNS, SEED } from "./support/fuzzBodies.js"
import { expectRefused } from "./support/fuzzRun.js"
import { auditKeys, type ListEndpoint, pageKeys, queryOf, rawRequest, worldSnapshot } from "./support/fuzzRequests.js"
import { apiTestLayer, expectData, expectError, seedAdmin, seedNamespace, send } from "./support/iamServer.js"

/** A query key as the server reads it; a malformed escape stays as sent. */
const decoded = (key: string) => {
  try {
    return decodeURIComponent(key)
  } catch {
    return key
  }
}

describe("hostile query strings on every list endpoint", () => {
  it.layer(apiTestLayer(), { timeout: 120_000 })((it) => {
    it.effect("each answer is a 200 list or a 400 naming a sent parameter, never a 5xx, and nothing is written", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdmin("fuzz-query-lists@example.com")
        const ns = yield* seedNamespace("fuzz-query-lists")
        const configuration = expectData(yield* send(baseUrl, "POST", `/namespaces/${ns}/configurations`, admin.headers, { kind: "agent", values: {} }), 201)
        const agent = expectData(yield* send(baseUrl, "POST", `/namespaces/${ns}/agents`, admin.headers, { name: "fuzz-query-agent", configurationId: configuration.id }), 201)
        const paged = [
          "/namespaces", `/namespaces/${ns}/agents`, `/namespaces/${ns}/agents/${agent.id}/revisions`, `/namespaces/${ns}/configurations`,
          `/namespaces/${ns}/presets`, `/namespaces/${ns}/secrets`, `/namespaces/${ns}/service-accounts`, `/namespaces/${ns}/credential-sources`,
          `/namespaces/${ns}/iam/roles`, `/namespaces/${ns}/iam/access-bindings`, `/namespaces/${ns}/iam/service-principals`, "/iam/service-principals"
        ]
        const endpoints: ReadonlyArray<ListEndpoint> = [
          ...paged.map((path) => ({ path, keys: pageKeys })),
          { path: "/audit", keys: auditKeys },
          { path: `/namespaces/${ns}/audit`, keys: auditKeys }
        ]
        const runtime = yield* Effect.runtime<SqlClient.SqlClient>()
        const snapshot = () => Runtime.runPromise(runtime)(worldSnapshot)
        const before = yield* Effect.promise(snapshot)
        yield* Effect.promise(() =>
          fc.assert(
            fc.asyncProperty(fc.oneof(...endpoints.map((endpoint) => queryOf(endpoint).map((q) => ({ path: endpoint.path, ...q })))), async ({ path, query, keys }) => {
              const result = await rawRequest(baseUrl, "GET", `${path}?${query}`, admin.headers)
              const says = `${path}?${query.slice(0, 300)} -> ${result.text.slice(0, 300)}`
              if (result.status === 200) {
                expect(Array.isArray(typeof result.body === "object" ? result.body.data : undefined), says).toBe(true)
                return
              }
              expectRefused(result, says)
              // A head over Node's 16 KiB is refused before routing (the enveloped server answers it).
              if (result.status === 431 && query.length > 16_000) return
              expect(result.status, says).toBe(400)
              const named = keys.map((key) => `/${decoded(key).replace(/~/g, "~0").replace(/\//g, "~1")}`)
              const details = typeof result.body === "object" ? result.body.error?.details ?? [] : []
              expect(details.length, says).toBeGreaterThan(0)
              for (const detail of details) expect(named, says).toContain(detail.path.replace(/\/\d+$/, ""))
            }),
            { seed: SEED, numRuns: RUNS * 10 }
          )
        )
        expect(yield* Effect.promise(snapshot)).toBe(before)
      }), 60_000)

    it.effect("limit is plain decimal digits: hex, exponents, signs, spaces, fractions and leading zeros are 400 at /limit", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdmin("fuzz-query-limit@example.com")
        const ns = yield* seedNamespace("fuzz-query-limit")
        for (const [path, max] of [[`/namespaces/${ns}/secrets`, 1000], [`/namespaces/${ns}/audit`, 200]] as const) {
          for (const limit of ["0x10", "%201", "1%20", "1e3", "1.0", "%2B1", "01", "-1", "", "abc", "0", String(max + 1), "9".repeat(40)]) {
            expectError(yield* send(baseUrl, "GET", `${path}?limit=${limit}`, admin.headers), 400, "INVALID_REQUEST", [
              { code: "INVALID_VALUE", path: "/limit" }
            ])
          }
          for (const limit of ["1", String(max)]) expect(Array.isArray(expectData(yield* send(baseUrl, "GET", `${path}?limit=${limit}`, admin.headers), 200))).toBe(true)
        }
      }))
  })
})
