/**
 * `GET .../agents/repository-options` without a working discovery (SPEC 4.4, 7.3, 8): no Repo
 * Driver selected (nothing is approved: `[]`), a Repo Driver whose credential service is not
 * running (the registry still lists; descriptions 503 `REPOSITORY_OPTIONS_UNAVAILABLE`), and
 * the `descriptionRefs` rules with their exact details.
 */
import { describe, expect, layer } from "@effect/vitest"
import { makeCodehostRepoDriver, RepoDriver } from "@svc/core/drivers/repo"
import { Effect, Layer } from "effect"
import { NS_A, sampleRegistry } from "../../../testing/credentialService.js"
import { apiTestLayer, expectData, expectError } from "./support/iamServer.js"
import { optionsFixture } from "./support/repositoryOptions.js"

const ref = (n: number, length = 8) => `r${String(n).padStart(length - 1, "0")}`
const refs = (count: number, length = 8) => Array.from({ length: count }, (_, i) => ref(i, length)).join(",")

/** Each malformed query and the one detail it gets. */
const invalid: ReadonlyArray<readonly [string, string, string]> = [
  [refs(21), "TOO_LONG", "/descriptionRefs"],
  [refs(20, 130), "TOO_LONG", "/descriptionRefs"],
  ["widgets,,gadgets", "INVALID_FORMAT", "/descriptionRefs/1"],
  ["-widgets", "INVALID_FORMAT", "/descriptionRefs/0"],
  ["widgets,", "INVALID_FORMAT", "/descriptionRefs/1"],
  ["wid gets", "INVALID_FORMAT", "/descriptionRefs/0"],
  [ref(0, 129), "TOO_LONG", "/descriptionRefs/0"],
  ["widgets,gadgets,widgets", "INVALID_VALUE", "/descriptionRefs/2"]
]

describe("repository options without a Repo Driver", () => {
  layer(apiTestLayer(), { timeout: 120_000, excludeTestServices: true })((it) => {
    it.effect("nothing is approved: an empty list, descriptions not pending", () =>
      Effect.gen(function* () {
        const a = yield* optionsFixture(NS_A, "no-driver")
        for (const query of ["", "?descriptionRefs=widgets", "?descriptionRefs="]) {
          const answer = yield* a.options(query)
          expect(expectData(answer, 200)).toEqual([])
          expect(answer.body.meta.descriptionsPending).toBe(false)
        }
      }))

    it.effect("descriptionRefs: up to 20 unique well-formed references in at most 2579 characters", () =>
      Effect.gen(function* () {
        const a = yield* optionsFixture(NS_A, "validation")
        for (const [query, code, path] of invalid) {
          expectError(yield* a.options(`?descriptionRefs=${encodeURIComponent(query)}`), 400, "INVALID_REQUEST", [{ code, path }])
        }
        // The limits themselves are accepted: 20 references of 128 characters are 2579 characters.
        expect(refs(20, 128)).toHaveLength(2579)
        expect(expectData(yield* a.options(`?descriptionRefs=${refs(20, 128)}`), 200)).toEqual([])
        expectError(yield* a.options("?descriptionRefs=a&descriptionRefs=b"), 400, "INVALID_REQUEST", [
          { code: "INVALID_TYPE", path: "/descriptionRefs" }
        ])
      }))
  })
})

describe("repository options with the credential service down", () => {
  const driver = makeCodehostRepoDriver(
    { id: "codehost", controlSocket: "/nonexistent/control.sock", sessionDurationSeconds: 900 },
    sampleRegistry()
  )
  layer(apiTestLayer().pipe(Layer.provide(Layer.succeed(RepoDriver, driver))), { timeout: 120_000, excludeTestServices: true })((it) => {
    it.effect("the registry still lists; descriptions answer 503 REPOSITORY_OPTIONS_UNAVAILABLE", () =>
      Effect.gen(function* () {
        const a = yield* optionsFixture(NS_A, "down")
        const listed = yield* a.options()
        expect(expectData(listed, 200)).toEqual([
          { repositoryRef: "widgets", displayName: "acme/widgets", allowedProfiles: ["git-read", "git-write"] }
        ])
        expect(listed.body.meta.descriptionsPending).toBe(false)
        const refused = yield* a.options("?descriptionRefs=widgets")
        expectError(refused, 503, "REPOSITORY_OPTIONS_UNAVAILABLE")
        expect(refused.text).not.toContain("nonexistent")
        // A reference the Namespace cannot bind needs no discovery.
        expect(expectData(yield* a.options("?descriptionRefs=gadgets"), 200)).toHaveLength(1)
      }))
  })
})
