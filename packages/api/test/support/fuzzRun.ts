/**
 * How the bad-input fuzz tests attack one route (bodies: fuzzBodies.ts): every listed invalid
 * value of a field on its own, bodies invalid by construction, and shaped bodies, each checked
 * against the route's table snapshot.
 */
import type { SqlClient } from "@effect/sql"
import { Effect, Runtime } from "effect"
import fc from "fast-check"
import { expect } from "vitest"
import { call, REQUEST_ID } from "../../../../testing/server.js"
import { invalidBody, RUNS, SEED, shapedBody, type Target } from "./fuzzBodies.js"

export type Answer = Pick<Awaited<ReturnType<typeof call>>, "status" | "text" | "body">

/** For each field with rules of its own, the valid body with that field set to each of its listed invalid values. */
export const listedCases = (target: Target) =>
  Object.entries(target.fields).flatMap(([name, kind]) =>
    typeof kind === "object" ? kind.cases.map((value) => [name, JSON.stringify({ ...target.valid, [name]: value })] as const) : []
  )

export const expectEnvelope = (result: Answer) => {
  expect(result.body, result.text.slice(0, 300)).toEqual({
    error: expect.objectContaining({ code: expect.any(String), message: expect.any(String) }),
    meta: { requestId: expect.stringMatching(REQUEST_ID) }
  })
}

/** A 4xx error envelope; a 400's details all point at `pointer` or inside it, when one is given. */
export const expectRefused = (result: Answer, says: string, pointer?: string) => {
  expect(result.status, says).toBeGreaterThanOrEqual(400)
  expect(result.status, says).toBeLessThan(500)
  expectEnvelope(result)
  if (pointer !== undefined && result.status === 400) {
    const details: ReadonlyArray<{ readonly path?: unknown }> = result.body.error.details ?? [{}]
    const escaped = pointer.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
    for (const detail of details) expect(detail.path, says).toMatch(new RegExp(`^${escaped}(/|$)`))
  }
}

/**
 * Attacks `target` through `request` (one call per body): listed values (a 4xx naming the
 * field), invalid bodies (a 4xx), shaped bodies (never a 5xx); a refusal writes nothing the
 * target's snapshot sees.
 */
export const attack = (target: Target, request: (body: string) => Promise<Answer>) =>
  Effect.gen(function* () {
    const runtime = yield* Effect.runtime<SqlClient.SqlClient>()
    const snapshot = () => Runtime.runPromise(runtime)(target.snapshot)
    yield* Effect.promise(async () => {
      // Nothing is written, so one snapshot before them all serves every case.
      const before = await snapshot()
      for (const [field, body] of listedCases(target)) {
        const result = await request(body)
        const says = `${target.route} ${body.slice(0, 200)} -> ${result.text.slice(0, 300)}`
        expectRefused(result, says, `/${field}`)
        expect(await snapshot(), says).toBe(before)
      }
    })
    yield* Effect.promise(() =>
      fc.assert(
        fc.asyncProperty(invalidBody(target), async (body) => {
          const before = await snapshot()
          const result = await request(body)
          expectRefused(result, `${target.route} ${body.slice(0, 200)} -> ${result.text.slice(0, 300)}`)
          expect(await snapshot()).toBe(before)
        }),
        { seed: SEED, numRuns: target.runs ?? RUNS }
      )
    )
    if (target.shapedBodies === false) return
    yield* Effect.promise(() =>
      fc.assert(
        fc.asyncProperty(shapedBody(target), async (body) => {
          const before = await snapshot()
          const result = await request(body)
          expect(result.status, `${target.route} ${body.slice(0, 200)} -> ${result.text.slice(0, 300)}`).toBeLessThan(500)
          if (result.status >= 400) {
            expectEnvelope(result)
            expect(await snapshot()).toBe(before)
          }
        }),
        { seed: SEED, numRuns: target.runs ?? RUNS }
      )
    )
  })

/** `attack` over HTTP on `baseUrl`, as the caller `headers` (or the target's own). */
export const attackTarget = (baseUrl: string, headers: Record<string, string>, target: Target) =>
  attack(target, (body) =>
    call(`${baseUrl}${target.path}`, { method: target.method, headers: { ...(target.headers ?? headers), "content-type": "application/json" }, body }))
