/**
 * Issue 11, item 3: every list page costs at most two statements — the credential lookup and
 * the page, which carries the list's authorization and the existence of what it lists in.
 * Item 1: GET /installation is one, its decision and row riding in the credential lookup. The
 * statements are counted on the real pg client while one request is served (the test server
 * runs in this process and nothing else queries meanwhile). The denial paths keep their exact
 * answers (they run the unfolded checks; the authorization matrix covers them).
 */
import { describe, expect, it } from "@effect/vitest"
import { NamespaceId } from "@svc/core/schema"
import { Effect } from "effect"
import { bindInstallationAdmin, createAgentRow } from "../../../testing/identity.js"
import { TestServer } from "../../../testing/server.js"
import { apiTestLayer, expectData, expectError, seedAdmin, seedNamespace, seedServiceKey, send } from "./support/iamServer.js"
import { counted } from "./support/statementCounter.js"

describe("list statements", () => {
  it.layer(apiTestLayer(), { timeout: 120_000 })((it) => {
    it.effect("every list page is two statements: the credential lookup and the page", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedServiceKey("list-counter")
        yield* bindInstallationAdmin(admin.principalId)
        const ns = yield* seedNamespace(`lists-${crypto.randomUUID().slice(0, 8)}`)
        const agent = yield* createAgentRow(ns)
        const lists = [
          "/namespaces",
          `/namespaces/${ns}/agents`,
          `/namespaces/${ns}/agents/${agent.id}/revisions`,
          `/namespaces/${ns}/configurations`,
          `/namespaces/${ns}/secrets`,
          `/namespaces/${ns}/presets`,
          `/namespaces/${ns}/service-accounts`,
          `/namespaces/${ns}/credential-sources`,
          `/namespaces/${ns}/iam/roles`,
          `/namespaces/${ns}/iam/access-bindings`,
          "/iam/service-principals",
          `/namespaces/${ns}/iam/service-principals`,
          "/audit",
          `/namespaces/${ns}/audit`
        ]
        // Warm up: the first request of a route prepares nothing we count, but keeps the figure honest.
        for (const path of lists) expectData(yield* send(baseUrl, "GET", path, admin.headers), 200)
        const figures: Record<string, number> = {}
        for (const path of lists) {
          const { result, statements, names } = yield* counted(send(baseUrl, "GET", path, admin.headers))
          expectData(result, 200)
          figures[path] = statements
          // Both named prepared statements: planned once per connection, not per page.
          expect({ path, names }).toEqual({ path, names: [expect.stringMatching(/^svc_[0-9a-f]{24}$/), expect.stringMatching(/^svc_[0-9a-f]{24}$/)] })
        }
        expect(figures).toEqual(Object.fromEntries(lists.map((path) => [path, 2])))
      }))

    it.effect("GET /installation and GET /backends are one statement with a key and with a cookie: the credential lookup decides (and reads the row)", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const key = yield* seedServiceKey("installation-counter")
        yield* bindInstallationAdmin(key.principalId)
        const human = yield* seedAdmin(`installation-counter-${crypto.randomUUID().slice(0, 8)}@example.test`)
        // What each answers (the default configuration: embedded execution, no Backends).
        const answers: Record<string, (data: { readonly capabilities?: unknown }) => unknown> = {
          "/installation": (data) => data.capabilities,
          "/backends": (data) => data
        }
        const expected: Record<string, unknown> = { "/installation": { agentProvisioning: { executionModes: ["embedded"] } }, "/backends": [] }
        for (const [path, answer] of Object.entries(answers)) {
          for (const headers of [key.headers, human.headers]) {
            expectData(yield* send(baseUrl, "GET", path, headers), 200)
            const { result, statements, names } = yield* counted(send(baseUrl, "GET", path, headers))
            expect(answer(expectData(result, 200))).toEqual(expected[path])
            expect({ path, statements }).toEqual({ path, statements: 1 })
            // A named prepared statement: parsed and planned once per connection.
            expect(names).toEqual([expect.stringMatching(/^svc_[0-9a-f]{24}$/)])
          }
        }
        const stranger = yield* seedServiceKey("installation-stranger")
        expectError(yield* send(baseUrl, "GET", "/installation", stranger.headers), 403, "FORBIDDEN")
        expectError(yield* send(baseUrl, "GET", "/backends", stranger.headers), 403, "FORBIDDEN")
      }))

    it.effect("a list in an absent Namespace or of an absent Agent is still 404, in the same two statements", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedServiceKey("list-missing")
        yield* bindInstallationAdmin(admin.principalId)
        const ns = yield* seedNamespace(`lists-${crypto.randomUUID().slice(0, 8)}`)
        const absentNamespace = yield* counted(send(baseUrl, "GET", `/namespaces/${NamespaceId.make()}/agents`, admin.headers))
        expectError(absentNamespace.result, 404, "NOT_FOUND")
        expect(absentNamespace.result.body.error.message).toBe("The Namespace does not exist.")
        expect(absentNamespace.statements).toBe(2)
        const absentAgent = yield* counted(send(baseUrl, "GET", `/namespaces/${ns}/agents/agt_00000000-0000-4000-8000-000000000000/revisions`, admin.headers))
        expectError(absentAgent.result, 404, "NOT_FOUND")
        expect(absentAgent.result.body.error.message).toBe("The Agent does not exist.")
        expect(absentAgent.statements).toBe(2)
      }))

    it.effect("a caller without a grant gets the unfolded answer: 404 for a Namespace it cannot read, 403 out of scope", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const ns = yield* seedNamespace(`lists-${crypto.randomUUID().slice(0, 8)}`)
        const other = yield* seedNamespace(`lists-${crypto.randomUUID().slice(0, 8)}`)
        const stranger = yield* seedServiceKey("list-stranger")
        expectError(yield* send(baseUrl, "GET", `/namespaces/${ns}/agents`, stranger.headers), 404, "NOT_FOUND")
        const scoped = yield* seedServiceKey("list-scoped", other)
        expectError(yield* send(baseUrl, "GET", `/namespaces/${ns}/secrets`, scoped.headers), 403, "FORBIDDEN")
        expectError(yield* send(baseUrl, "GET", "/audit", stranger.headers), 403, "FORBIDDEN")
      }))
  })
})
