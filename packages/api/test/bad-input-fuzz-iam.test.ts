/**
 * Hostile bodies against the IAM create routes (SPEC 4.7, DESIGN §6): custom Namespace Roles,
 * AccessBindings and service principals (Installation- and Namespace-scoped), from the fixed seed
 * of support/fuzzBodies.ts. Every listed invalid value of a field gets a 4xx envelope whose 400
 * details point into that field; invalid bodies a 4xx envelope; shaped bodies never a 5xx; a
 * refusal writes no row of the route's table and no success audit (support/fuzzRun.ts).
 */
import { describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { attackTarget } from "./support/fuzzRun.js"
import { iamTargets } from "./support/fuzzTargetsIdentity.js"
import { apiTestLayer } from "./support/iamServer.js"

describe("bad input on the IAM create routes", () => {
  it.layer(apiTestLayer(), { timeout: 120_000 })((it) => {
    it.effect("invalid bodies get a 4xx envelope and write nothing; shaped bodies never get a 5xx", () =>
      Effect.gen(function* () {
        const { admin, baseUrl, targets } = yield* iamTargets
        for (const target of targets) yield* attackTarget(baseUrl, admin.headers, target)
      }), 60_000)
  })
})
