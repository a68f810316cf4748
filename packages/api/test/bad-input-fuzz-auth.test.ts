/**
 * Hostile bodies against the credential routes of SPEC 4.1 and 5: email sign-in (attacked
 * without a session), account creation and service-key issuance, from the fixed seed of
 * support/fuzzBodies.ts. Every listed invalid value of a field gets a 4xx envelope whose 400
 * details point into that field; invalid bodies a 4xx envelope; shaped bodies never a 5xx; a
 * refusal writes no account, principal, method, binding, session or key, and no success audit
 * (support/fuzzRun.ts). The account mutations are in bad-input-fuzz-accounts.test.ts.
 */
import { describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { attackTarget } from "./support/fuzzRun.js"
import { authTargets } from "./support/fuzzTargetsIdentity.js"
import { apiTestLayer } from "./support/iamServer.js"

describe("bad input on the sign-in, account and service-key routes", () => {
  it.layer(apiTestLayer(), { timeout: 120_000 })((it) => {
    it.effect("invalid bodies get a 4xx envelope and write nothing; shaped bodies never get a 5xx", () =>
      Effect.gen(function* () {
        const { admin, baseUrl, credentials } = yield* authTargets
        for (const target of credentials) yield* attackTarget(baseUrl, admin.headers, target)
      }), 60_000)
  })
})
