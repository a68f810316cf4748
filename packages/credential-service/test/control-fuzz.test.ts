/**
 * Hostile input on the private control interface (SPEC 4.8) of a real `svc credential-service`
 * process, over its Unix socket, with the bad-input fuzz loop of the API (support/fuzzRun.ts,
 * fixed seed): session-admission bodies (`durationSeconds`, `profile`, the frozen `grant`) and
 * repository-description bodies; `X-Admission-Id` headers of arbitrary text; and session ids in the
 * path with hostile shapes. Every refusal is a 4xx error envelope with `meta.requestId` (a 400's
 * details point into the offending field or header), never a 5xx, and writes no session row.
 */
import { SqlClient } from "@effect/sql"
import { Effect, ManagedRuntime } from "effect"
import fc from "fast-check"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { admissionId, frozenGrant, NS_A, NS_B, socketRequest } from "../../../testing/credentialService.js"
import { pgClientLayer } from "../../../testing/database.js"
import { anyText, type NestedField, RUNS, SEED, type Target, tableSnapshot } from "../../api/test/support/fuzzBodies.js"
import { type Answer, attack, expectRefused } from "../../api/test/support/fuzzRun.js"
import { urlText } from "../../api/test/support/fuzzRequests.js"
import { useCredentialService } from "./support/service.js"

const world = useCredentialService()
const grant = frozenGrant(world.registry, NS_A, "widgets", "git-write")
let database: ManagedRuntime.ManagedRuntime<SqlClient.SqlClient, unknown>

beforeAll(() => {
  database = ManagedRuntime.make(pgClientLayer(world.databaseUrl()))
})

// Registered after the world's: runs before it, so the pool closes before the database is dropped.
afterAll(async () => {
  await database?.dispose()
})

const field = (structured: boolean, wrongType: fc.Arbitrary<unknown>, cases: ReadonlyArray<unknown>, shaped: fc.Arbitrary<unknown>): NestedField =>
  ({ structured, wrongType, cases, invalid: fc.constantFrom(...cases), shaped })
const notText = fc.oneof(fc.integer(), fc.boolean(), fc.constant(null), fc.array(fc.string(), { maxLength: 2 }))
const hex = (n: number) => "0123456789abcdef".repeat(8).slice(0, n)

const sessions = tableSnapshot((sql) => sql<{ row: string }>`SELECT row_to_json(s)::text AS row FROM repository_sessions s ORDER BY 1`)

const open: Target = {
  route: "POST /v1/sessions",
  method: "POST",
  path: "/v1/sessions",
  valid: { durationSeconds: 600, grant },
  fields: {
    durationSeconds: field(false, fc.oneof(fc.string(), fc.boolean(), fc.constant(null)), [59, 86401, 0, -1, 600.5, "600", null, 1e21], fc.oneof(fc.integer(), fc.double(), fc.constantFrom(60, 86400))),
    profile: field(false, notText, ["", "Git-Write", "git write", "git-admin", "git-read\u0000", "g".repeat(200), null], fc.oneof(anyText, fc.constantFrom("git-read", "git-write", "git-full"))),
    grant: field(true, fc.oneof(fc.string(), fc.integer(), fc.constant(null), fc.array(fc.jsonValue(), { maxLength: 2 })), [
      {},
      { ...grant, namespaceId: "ns_x" },
      { ...grant, namespaceId: NS_A.toUpperCase() },
      { ...grant, repositoryRef: "-widgets" },
      { ...grant, repositoryRef: "r".repeat(129) },
      { ...grant, profile: "git-admin" },
      { ...grant, fingerprint: `sha256:${hex(63)}` },
      { ...grant, fingerprint: `sha256:${hex(64).toUpperCase()}` },
      { ...grant, fingerprint: `sha1:${hex(40)}` },
      { ...grant, owner: "acme" },
      { ...grant, fingerprint: undefined }
    ], fc.oneof(
      fc.constant(grant),
      fc.record({
        namespaceId: fc.oneof(fc.constantFrom(NS_A, NS_B), anyText),
        repositoryRef: fc.oneof(fc.constantFrom("widgets", "gadgets", "r".repeat(128)), anyText),
        profile: fc.oneof(fc.constantFrom("git-read", "git-write", "git-full"), anyText),
        fingerprint: fc.oneof(fc.constant(grant.fingerprint), fc.constant(`sha256:${hex(64)}`), anyText)
      })
    ))
  },
  required: ["durationSeconds", "grant"],
  snapshot: sessions
}

// Whatever shape it has, a well-formed request asks the code host (absent here) for descriptions:
// its specified answer is 503 DEPENDENCY_UNAVAILABLE, so only refused bodies are sent.
const describeTarget: Target = {
  route: "POST /v1/repository-descriptions",
  method: "POST",
  path: "/v1/repository-descriptions",
  valid: { repositoryRefs: ["widgets"] },
  fields: {
    repositoryRefs: field(true, fc.oneof(fc.string(), fc.integer(), fc.constant(null), fc.dictionary(fc.string(), fc.string(), { maxKeys: 2 })), [
      [],
      ["widgets", "widgets"],
      ["-widgets"],
      ["r".repeat(129)],
      [""],
      [1],
      [null],
      ["widgets\u0000"],
      Array.from({ length: 1001 }, (_, i) => `repo-${i}`)
    ], fc.constant(["widgets"]))
  },
  required: ["repositoryRefs"],
  snapshot: sessions,
  shapedBodies: false
}

const asAnswer = (response: { status: number; text: string; body: unknown }): Answer => response as Answer

const post = (target: string, body: string, id: string = admissionId()) =>
  socketRequest(world.socketPath(), "POST", target, { headers: { "content-type": "application/json", "x-admission-id": id }, body }).then(asAnswer)

const run = <A>(effect: Effect.Effect<A, unknown, SqlClient.SqlClient>) => database.runPromise(effect)

describe("hostile input on the control interface", () => {
  it("session admission and description bodies: a 4xx envelope naming the field, never a 5xx, no session written", async () => {
    for (const target of [open, describeTarget]) await run(attack(target, (body) => post(target.path, body)))
  }, 60_000)

  it("an X-Admission-Id of arbitrary text is a 400 at the header unless it is a fresh, well-formed id; never a 5xx", async () => {
    const body = JSON.stringify({ durationSeconds: 600, grant })
    const header = fc.string({ unit: fc.oneof(fc.integer({ min: 0x20, max: 0x7e }), fc.integer({ min: 0x80, max: 0xff })).map((c) => String.fromCharCode(c)), maxLength: 120 })
    const shaped = fc.tuple(fc.integer({ min: 0, max: 10_000_000_000_000 }), fc.uuid({ version: 4 })).map(([ms, uuid]) => `${ms}-${uuid}`)
    await fc.assert(
      fc.asyncProperty(fc.oneof(header, shaped), async (id) => {
        const before = await run(sessions)
        const answer = await post("/v1/sessions", body, id)
        const says = `${JSON.stringify(id)} -> ${answer.text.slice(0, 300)}`
        expectRefused(answer, says, "/headers/x-admission-id")
        expect(answer.status, says).toBe(400)
        expect(await run(sessions), says).toBe(before)
      }),
      { seed: SEED, numRuns: RUNS * 2 }
    )
  }, 60_000)

  it("a session id of arbitrary shape in the path is a 4xx envelope, never a 5xx, and closes nothing", async () => {
    await fc.assert(
      fc.asyncProperty(urlText.filter((text) => text.length > 0), fc.boolean(), async (id, close) => {
        const before = await run(sessions)
        const answer = asAnswer(await socketRequest(world.socketPath(), close ? "POST" : "GET", `/v1/sessions/${id}${close ? "/close" : ""}`))
        expectRefused(answer, `${id.slice(0, 200)} -> ${answer.text.slice(0, 300)}`)
        expect(await run(sessions)).toBe(before)
      }),
      { seed: SEED, numRuns: RUNS * 2 }
    )
  }, 60_000)
})
