/**
 * Hostile bodies against the account mutations of SPEC 4.1 that carry `expectedVersion`
 * (disable, linking a code-host or identity-provider subject) and against moving the recovery
 * designation, from the fixed seed of support/fuzzBodies.ts. Every listed invalid value of a
 * field gets a 4xx envelope whose 400 details point into that field; invalid bodies a 4xx
 * envelope; shaped bodies never a 5xx; a refusal changes no account, method, session or
 * designation, and writes no success audit (support/fuzzRun.ts).
 */
import { describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { attackTarget } from "./support/fuzzRun.js"
import { authTargets } from "./support/fuzzTargetsIdentity.js"
import { apiTestLayer } from "./support/iamServer.js"

describe("bad input on the account mutations and recovery", () => {
  it.layer(apiTestLayer(), { timeout: 120_000 })((it) => {
    it.effect("invalid bodies get a 4xx envelope and write nothing; shaped bodies never get a 5xx", () =>
      Effect.gen(function* () {
        const { admin, baseUrl, accounts } = yield* authTargets
        for (const target of accounts) yield* attackTarget(baseUrl, admin.headers, target)
      }), 60_000)
  })
})
