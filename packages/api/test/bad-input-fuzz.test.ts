/**
 * Hostile bodies against every create and update route of the tenancy capability (Namespaces,
 * Secrets, Configurations, Presets), of Agents (with their repository fields and settings:
 * execution mode, Backend, harness binding, plugins, approvers), of Agent provisioning, of service
 * accounts (credential reference and issuance) and of credential sources, generated with
 * fast-check from a fixed seed and a bounded number of runs so `npm test` is repeatable (bodies:
 * support/fuzzBodies.ts; routes: support/fuzzTargets.ts; fields with rules of their own:
 * support/fuzzFields.ts):
 * - every listed invalid value of a field with rules of its own, sent on its own, gets a 4xx
 *   error envelope whose 400 details all point into that field, and writes nothing;
 * - bodies that are invalid by construction (wrong types, huge strings, deep nesting, control
 *   characters, NUL, `__proto__`-like map keys, unknown fields, wrong ID prefixes, missing
 *   fields, broken repository bindings, values breaking a field's own rules, non-object or
 *   broken JSON) must get a 4xx error envelope and write nothing;
 * - bodies drawn from the whole JSON value space inside the right shape (any Unicode, any
 *   number) may succeed or be refused, but never with a 5xx, and a refusal writes nothing.
 * A body other than `{}` to issue a service-account credential is refused before the (absent) Driver.
 * And hostile `descriptionRefs` queries of the repository options: a 200 or a 400 envelope, never a 5xx.
 * The attack loop is support/fuzzRun.ts; other surfaces have files of their own: bad-input-fuzz-iam,
 * -auth, -accounts (identity routes), -queries (list query strings), -paths (path parameters),
 * -control (bodyless routes, Idempotency-Key), and the credential service's control-fuzz.test.ts.
 */
import { describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { Effect, Runtime } from "effect"
import fc from "fast-check"
import { call, TestServer } from "../../../testing/server.js"
import { RUNS, SEED } from "./support/fuzzBodies.js"
import { attackTarget, expectEnvelope } from "./support/fuzzRun.js"
import { fuzzTargets } from "./support/fuzzTargets.js"
import { apiTestLayer, expectData, expectError, seedAdmin, seedNamespace, send } from "./support/iamServer.js"
import { accountsPath, createAccount, notEmptyBodies, rows } from "./support/serviceAccountWorld.js"
import { withBundledPlugins } from "./support/pluginsWorld.js"

/** A query value: reference characters, commas, any code point, and raw percent escapes of any byte. */
const queryValue = fc.array(
  fc.oneof(
    fc.constantFrom("widgets", "a", ",", ",,", "-", ".", "_", "r".repeat(128)),
    fc.string({ unit: "binary", maxLength: 4 }).map((s) => Array.from(new TextEncoder().encode(s), (b) => `%${b.toString(16).padStart(2, "0")}`).join("")),
    fc.integer({ min: 0, max: 255 }).map((b) => `%${b.toString(16).padStart(2, "0").toUpperCase()}`),
    fc.constantFrom("%", "%G1", "+", "&", "&descriptionRefs=x", "#", "%00", "%2C")
  ),
  { maxLength: 40 }
).chain((parts) => fc.integer({ min: 0, max: 3000 }).map((pad) => (pad > 2500 ? `${parts.join("")}${"b".repeat(pad)}` : parts.join(""))))

describe("bad input on every tenancy and Agent create and update route", () => {
  it.layer(apiTestLayer(withBundledPlugins), { timeout: 600_000 })((it) => {
    it.effect("invalid bodies get a 4xx envelope and write nothing; shaped bodies never get a 5xx", () =>
      Effect.gen(function* () {
        const { admin, baseUrl, targets } = yield* fuzzTargets
        for (const target of targets) yield* attackTarget(baseUrl, admin.headers, target)
      }), 300_000) // 16 routes x 60 runs x 2 properties + 421 listed values: ~25 s alone, over a minute on a busy 2-core host

    it.effect("issuing a service-account credential without a Driver: a body other than {} is a 400 with details, not the 503 {} gets", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdmin("fuzz-issue-admin@example.com")
        const ns = yield* seedNamespace("fuzz-issue")
        const account = expectData(yield* createAccount(baseUrl, admin.headers, ns, "fuzz-issue"), 201) as { id: string }
        const issue = (body: string) => send(baseUrl, "POST", `${accountsPath(ns)}/${account.id}/credentials`, admin.headers, body)
        for (const [body, details] of notEmptyBodies) {
          expectError(yield* issue(body), 400, "INVALID_REQUEST", details)
          expect(yield* rows(account.id)).toEqual({ accounts: ["ready"], sealed: 0 })
        }
        expectError(yield* issue("{}"), 503, "DEPENDENCY_UNAVAILABLE")
        expect(yield* rows(account.id)).toEqual({ accounts: ["ready"], sealed: 0 })
      }))

    it.effect("hostile descriptionRefs queries of the repository options get a 200 or a 400 envelope, never a 5xx", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdmin("fuzz-query-admin@example.com")
        const ns = yield* seedNamespace("fuzz-query")
        const runtime = yield* Effect.runtime<SqlClient.SqlClient>()
        const agents = () => Runtime.runPromise(runtime)(Effect.flatMap(SqlClient.SqlClient, (sql) => sql`SELECT count(*)::int AS n FROM agents`))
        const before = yield* Effect.promise(agents)
        yield* Effect.promise(() =>
          fc.assert(
            fc.asyncProperty(queryValue, async (value) => {
              const result = await call(`${baseUrl}/namespaces/${ns}/agents/repository-options?descriptionRefs=${value}`, { headers: admin.headers })
              expect(result.status, `${value.slice(0, 200)} -> ${result.text.slice(0, 300)}`).toBeLessThan(500)
              if (result.status === 200) expect(result.body.data).toEqual([])
              else {
                expect(result.status, value.slice(0, 200)).toBe(400)
                expectEnvelope(result)
                expect(result.body.error.code).toBe("INVALID_REQUEST")
              }
            }),
            { seed: SEED, numRuns: RUNS * 2 }
          )
        )
        expect(yield* Effect.promise(agents)).toEqual(before)
      }), 120_000)
  })
})
