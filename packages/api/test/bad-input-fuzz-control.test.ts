/**
 * Hostile bodies on the bodyless control routes (deploy, redeploy, stop, provisioning retry,
 * diagnostics, enrol) and hostile `Idempotency-Key` headers (DESIGN §18) on a create and on
 * deploy, from the fixed seed of support/fuzzBodies.ts:
 * - a bodyless route ignores whatever body it is sent: the answer (status and code) is the one
 *   the same request without a body gets, never a 5xx, and nothing more is written;
 * - a key outside 1-255 visible ASCII characters (after HTTP's own trimming of spaces and tabs)
 *   is 400 INVALID_REQUEST at `/headers/idempotency-key` and writes nothing; every other key is
 *   never a 5xx.
 */
import { describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { IDEMPOTENCY_KEY_PATTERN } from "@svc/core/api"
import { RevisionId, WorkId } from "@svc/core/schema"
import { Effect, Runtime } from "effect"
import fc from "fast-check"
import { createNamespaceRow } from "../../../testing/identity.js"
import { TestServer } from "../../../testing/server.js"
import { anyJson, RUNS, SEED } from "./support/fuzzBodies.js"
import { expectRefused } from "./support/fuzzRun.js"
import { rawRequest, worldSnapshot } from "./support/fuzzRequests.js"
import { apiTestLayer, expectData, seedAdmin, send } from "./support/iamServer.js"

/** A body of every kind: JSON of arbitrary shape, broken JSON, bytes that are not UTF-8, or nothing but a content type. */
const anyBody = fc.oneof(
  anyJson.map((value) => JSON.stringify(value) ?? "null"),
  anyJson.map((value) => (JSON.stringify(value) ?? "null").slice(0, -1)),
  fc.constantFrom("", "{", "}", "[]", "null", "\u0000", "{\"__proto__\":{\"x\":1}}", "\ufeff{}", "{}".padEnd(600 * 1024, " "))
)

/** Header text Node lets a client send: tab, visible ASCII, space and Latin-1. */
const headerText = fc.string({ unit: fc.oneof(fc.integer({ min: 0x20, max: 0x7e }), fc.integer({ min: 0x80, max: 0xff }), fc.constant(9)).map((c) => String.fromCharCode(c)), maxLength: 300 })

describe("bodyless control routes and Idempotency-Key headers", () => {
  it.layer(apiTestLayer(), { timeout: 120_000 })((it) => {
    it.effect("a bodyless route answers whatever body as it answers none; a malformed key is 400 at the header and writes nothing", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdmin("fuzz-control@example.com")
        // Not ready yet: deploy is refused before a Compute call, the same way every time.
        const ns = yield* createNamespaceRow("fuzz-control", "provisioning")
        const configuration = expectData(yield* send(baseUrl, "POST", `/namespaces/${ns}/configurations`, admin.headers, { kind: "agent", values: {} }), 201)
        const agent = expectData(yield* send(baseUrl, "POST", `/namespaces/${ns}/agents`, admin.headers, { name: "fuzz-control-agent", configurationId: configuration.id }), 201)
        const agentPath = `/namespaces/${ns}/agents/${agent.id}`
        const bodyless = [
          `${agentPath}/deploy`,
          `${agentPath}/revisions/${RevisionId.make()}/redeploy`,
          `${agentPath}/deployments/${RevisionId.make()}/diagnostics`,
          `/namespaces/${ns}/agents/provision/${WorkId.make()}/retry`,
          `/api/auth/accounts/${admin.userId}/enrol`
        ]
        const runtime = yield* Effect.runtime<SqlClient.SqlClient>()
        const snapshot = () => Runtime.runPromise(runtime)(worldSnapshot)
        const code = (body: unknown) => (typeof body === "object" && body !== null && "error" in body ? (body.error as { code: string }).code : null)
        const baseline = new Map<string, { status: number; code: string | null }>()
        for (const path of bodyless) {
          const answer = yield* Effect.promise(() => rawRequest(baseUrl, "POST", path, admin.headers))
          expect(answer.status, answer.text).toBeLessThan(500)
          baseline.set(path, { status: answer.status, code: code(answer.body) })
        }
        const before = yield* Effect.promise(snapshot)
        yield* Effect.promise(() =>
          fc.assert(
            fc.asyncProperty(fc.constantFrom(...bodyless), anyBody, fc.constantFrom("application/json", "text/plain", "application/x-www-form-urlencoded"), async (path, body, type) => {
              const answer = await rawRequest(baseUrl, "POST", path, { ...admin.headers, "content-type": type }, body)
              const says = `${path} ${body.slice(0, 200)} -> ${answer.text.slice(0, 300)}`
              expect({ status: answer.status, code: code(answer.body) }, says).toEqual(baseline.get(path))
              expect(await snapshot(), says).toBe(before)
            }),
            { seed: SEED, numRuns: RUNS * 2 }
          )
        )
        let created = 0
        yield* Effect.promise(() =>
          fc.assert(
            fc.asyncProperty(headerText, fc.constantFrom("secrets", "deploy"), async (key, route) => {
              const path = route === "deploy" ? `${agentPath}/deploy` : `/namespaces/${ns}/secrets`
              const body = route === "deploy" ? undefined : JSON.stringify({ name: `fuzz-key-${created++}`, value: "v" })
              const prior = await snapshot()
              const answer = await rawRequest(baseUrl, "POST", path, { ...admin.headers, "idempotency-key": key }, body)
              const says = `${route} ${JSON.stringify(key).slice(0, 300)} -> ${answer.text.slice(0, 300)}`
              expect(answer.status, says).toBeLessThan(500)
              if (IDEMPOTENCY_KEY_PATTERN.test(key.replace(/^[ \t]+|[ \t]+$/g, ""))) return
              expectRefused(answer, says, "/headers/idempotency-key")
              expect(answer.status, says).toBe(400)
              expect(await snapshot(), says).toBe(prior)
            }),
            { seed: SEED, numRuns: RUNS * 2 }
          )
        )
      }), 60_000)
  })
})
