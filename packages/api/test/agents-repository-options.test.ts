/**
 * `GET .../agents/repository-options` (SPEC 4.4, 2.14, 8) against a real credential service and
 * a loopback code host: options per Namespace, descriptions fetched once and cached,
 * `descriptionsPending`, 503 when discovery fails, 409 for a closed Namespace, query validation.
 * Without a Repo Driver and with an unreachable service: repository-options-unavailable.test.ts.
 */
import { describe, expect, layer } from "@effect/vitest"
import { RepoDriver } from "@svc/core/drivers/repo"
import { Effect, Layer, TestClock, TestContext } from "effect"
import { afterAll, beforeAll, it as plain } from "vitest"
import { makeDescriptionCache } from "../src/agents/descriptionCache.js"
import { until } from "../../../testing/poll.js"
import { apiTestLayer, expectData, expectError, seedHuman } from "./support/iamServer.js"
import {
  NS_A,
  NS_B,
  optionsDriver,
  optionsFixture,
  type OptionsUpstream,
  startOptionsUpstream,
  WIDGETS_DESCRIPTION
} from "./support/repositoryOptions.js"

let upstream: OptionsUpstream

beforeAll(async () => {
  upstream = await startOptionsUpstream()
}, 120_000)

afterAll(async () => {
  await upstream?.stop()
})

const reads = (repository: string) => upstream.host.requests.filter((r) => r === `GET /repos/${repository}`).length

const widgets = { repositoryRef: "widgets", displayName: "acme/widgets", allowedProfiles: ["git-read", "git-write"] }
const gadgets = { repositoryRef: "gadgets", displayName: "acme/gadgets", allowedProfiles: ["git-full"] }
const ghosts = { repositoryRef: "ghosts", displayName: "acme/ghosts", allowedProfiles: ["git-read"] }
const sprockets = { repositoryRef: "sprockets", displayName: "acme/sprockets", allowedProfiles: ["git-read"] }
const cogs = { repositoryRef: "cogs", displayName: "acme/cogs", allowedProfiles: ["git-read"] }

describe("repository options", () => {
  layer(apiTestLayer().pipe(Layer.provide(Layer.succeed(RepoDriver, optionsDriver))), { timeout: 180_000, excludeTestServices: true })((it) => {
    it.effect("lists what the registry approves for each Namespace, without the code host", () =>
      Effect.gen(function* () {
        const a = yield* optionsFixture(NS_A, "list-a")
        const b = yield* optionsFixture(NS_B, "list-b")
        const before = upstream.host.requests.length
        const listA = yield* a.options()
        expect(expectData(listA, 200)).toEqual([widgets, gadgets, ghosts])
        expect(listA.body.meta.descriptionsPending).toBe(false)
        const listB = yield* b.options()
        expect(expectData(listB, 200)).toEqual([{ ...widgets, allowedProfiles: ["git-read"] }, sprockets, cogs])
        expect(listB.body.meta).toEqual({ requestId: expect.any(String), descriptionsPending: false })
        expect(upstream.host.requests.length).toBe(before)
      }))

    it.effect("fetches the named descriptions with a metadata-only token, revokes it, and caches them", () =>
      Effect.gen(function* () {
        const a = yield* optionsFixture(NS_A, "describe-a")
        const mintedBefore = upstream.host.tokens.length
        const answer = yield* until(a.options("?descriptionRefs=widgets,gadgets,ghosts"), (r) => r.body?.meta?.descriptionsPending === false, 120)
        expect(expectData(answer, 200)).toEqual([
          { ...widgets, description: WIDGETS_DESCRIPTION },
          { ...gadgets, description: "G".repeat(512) },
          ghosts
        ])
        const minted = upstream.host.tokens.slice(mintedBefore)
        expect(minted.map((t) => ({ ids: [...t.repositoryIds].sort(), permissions: t.permissions }))).toEqual([
          { ids: [1001, 1002, 1003], permissions: { metadata: "read" } }
        ])
        yield* until(Effect.sync(() => upstream.host.revoked.includes(minted[0]!.token)), (revoked) => revoked, 60)

        // Within five minutes the cache answers: no second read, no new token.
        const widgetReads = reads("acme/widgets")
        const cached = yield* a.options("?descriptionRefs=ghosts,widgets")
        expect(expectData(cached, 200)).toEqual([{ ...widgets, description: WIDGETS_DESCRIPTION }, gadgets, ghosts])
        expect(cached.body.meta.descriptionsPending).toBe(false)
        expect(reads("acme/widgets")).toBe(widgetReads)
        expect(upstream.host.tokens.length).toBe(mintedBefore + 1)
      }))

    it.effect("another Namespace's repository is neither described nor fetched", () =>
      Effect.gen(function* () {
        const b = yield* optionsFixture(NS_B, "foreign-b")
        const gadgetReads = reads("acme/gadgets")
        const answer = yield* b.options("?descriptionRefs=gadgets,unknown-repo")
        expect(expectData(answer, 200)).toEqual([{ ...widgets, allowedProfiles: ["git-read"] }, sprockets, cogs])
        expect(answer.body.meta.descriptionsPending).toBe(false)
        expect(reads("acme/gadgets")).toBe(gadgetReads)
        expect(answer.text).not.toContain("acme/gadgets")
      }))

    it.effect("answers descriptionsPending while the code host is slow; concurrent requests share one fetch", () =>
      Effect.gen(function* () {
        const b = yield* optionsFixture(NS_B, "pending-b")
        const mintedBefore = upstream.host.tokens.length
        const release = upstream.host.holdRepositoryReads()
        const [first, second] = yield* Effect.all([b.options("?descriptionRefs=sprockets"), b.options("?descriptionRefs=sprockets,widgets")], {
          concurrency: 2
        })
        for (const held of [first, second]) {
          expect(expectData(held, 200)).toEqual(expect.arrayContaining([{ repositoryRef: "sprockets", displayName: "acme/sprockets", allowedProfiles: ["git-read"] }]))
          expect(held.body.meta.descriptionsPending).toBe(true)
        }
        yield* Effect.sync(release)
        const answer = yield* until(b.options("?descriptionRefs=sprockets"), (r) => r.body?.meta?.descriptionsPending === false, 120)
        expect(expectData(answer, 200)).toContainEqual(
          { repositoryRef: "sprockets", displayName: "acme/sprockets", allowedProfiles: ["git-read"], description: "Sprockets" }
        )
        // sprockets once, and widgets (if it was not cached yet) at most once more.
        expect(upstream.host.tokens.length - mintedBefore).toBeLessThanOrEqual(2)
        expect(reads("acme/sprockets")).toBe(1)
      }))

    it.effect("503 REPOSITORY_OPTIONS_UNAVAILABLE when the code host fails; the failure is not cached", () =>
      Effect.gen(function* () {
        const b = yield* optionsFixture(NS_B, "failing-b")
        upstream.host.failRepositoryReads(502)
        // A slow fetch answers descriptionsPending first; the next request waits on the same fetch.
        const failed = yield* until(b.options("?descriptionRefs=cogs"), (r) => r.status !== 200, 120)
        expectError(failed, 503, "REPOSITORY_OPTIONS_UNAVAILABLE")
        // Without descriptions the registry answers alone.
        expect(expectData(yield* b.options(), 200)).toHaveLength(3)
        upstream.host.failRepositoryReads(undefined)
        const answer = yield* until(b.options("?descriptionRefs=cogs"), (r) => r.status === 200 && r.body.meta.descriptionsPending === false, 120)
        expect(expectData(answer, 200)).toContainEqual({ repositoryRef: "cogs", displayName: "acme/cogs", allowedProfiles: ["git-read"], description: "Cogs" })
      }))

    it.effect("409 for a closed Namespace, 404 for none or for a caller who cannot see it", () =>
      Effect.gen(function* () {
        const deleting = yield* optionsFixture("ns_2d8f6f74-9e6f-4f3f-9c7b-4f5f5e3d4c32", "closed-deleting", "deleting")
        expectError(yield* deleting.options(), 409, "RESOURCE_CONFLICT")
        const failed = yield* optionsFixture("ns_3e9f7f85-af7f-4f4f-8d8c-5f6f6f4e5d43", "closed-failed", "failed")
        expectError(yield* failed.options("?descriptionRefs=widgets"), 409, "RESOURCE_CONFLICT")
        const provisioning = yield* optionsFixture("ns_4fa08096-b08f-4a5f-9e9d-6a7a7a5f6e54", "provisioning", "provisioning")
        expect(expectData(yield* provisioning.options(), 200)).toEqual([])
        yield* deleting.sql`UPDATE namespaces SET status = 'deleted' WHERE id = ${"ns_2d8f6f74-9e6f-4f3f-9c7b-4f5f5e3d4c32"}`
        expectError(yield* deleting.options(), 404, "NOT_FOUND")
        const human = yield* seedHuman(`options-nobody-${crypto.randomUUID()}@example.com`)
        // Without any grant on the Namespace its existence is not disclosed (as on every Namespace route).
        expectError(yield* provisioning.options("?descriptionRefs=widgets", human.headers), 404, "NOT_FOUND")
      }))
  })
})

describe("the description cache", () => {
  plain("keeps a description five minutes by the clock, then reads it again", async () => {
    const fetched: Array<ReadonlyArray<string>> = []
    const describe = (refs: ReadonlyArray<string>) => Effect.zipRight(Effect.sync(() => fetched.push(refs)), optionsDriver.describe(refs))
    const lookups = await Effect.runPromise(Effect.scoped(Effect.gen(function* () {
      const cache = yield* makeDescriptionCache(describe)
      const first = yield* cache.lookup(["ghosts", "widgets"])
      yield* TestClock.adjust("299 seconds")
      const cached = yield* cache.lookup(["widgets"])
      yield* TestClock.adjust("2 seconds")
      const expired = yield* cache.lookup(["widgets"])
      return [first, cached, expired]
    })).pipe(Effect.provide(TestContext.TestContext)))
    expect(fetched).toEqual([["ghosts", "widgets"], ["widgets"]])
    expect(lookups).toEqual([
      { descriptions: new Map([["ghosts", undefined], ["widgets", WIDGETS_DESCRIPTION]]), pending: false },
      { descriptions: new Map([["widgets", WIDGETS_DESCRIPTION]]), pending: false },
      { descriptions: new Map([["widgets", WIDGETS_DESCRIPTION]]), pending: false }
    ])
  }, 60_000)
})
