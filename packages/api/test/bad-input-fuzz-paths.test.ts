/**
 * Hostile path parameters on every route that takes one: percent-escapes of arbitrary bytes (invalid
 * UTF-8, encoded surrogates, NUL, `%2F`), dot segments sent raw (`..`, `%2E%2E`), over-long
 * values, all of Unicode, and real ids with something appended, each in one parameter while the
 * others name real resources, from the fixed seed of support/fuzzBodies.ts. Each answer is a 4xx
 * error envelope with `meta.requestId` (a 400's details point at a parameter of the route);
 * never a 5xx; nothing is written.
 */
import { describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { RevisionId, WorkId } from "@svc/core/schema"
import { Effect, Runtime } from "effect"
import fc from "fast-check"
import { TestServer } from "../../../testing/server.js"
import { RUNS, SEED } from "./support/fuzzBodies.js"
import { expectRefused } from "./support/fuzzRun.js"
import { rawRequest, urlText, worldSnapshot } from "./support/fuzzRequests.js"
import { apiTestLayer, expectData, seedAdmin, seedNamespace, send } from "./support/iamServer.js"

/** `[method, template, body]`: the body a route needs, so that only the parameter can be wrong. */
type Route = readonly [string, string, unknown?]

const ROUTES: ReadonlyArray<Route> = [
  ["GET", "/namespaces/:namespaceId"],
  ["DELETE", "/namespaces/:namespaceId"],
  ["GET", "/namespaces/:namespaceId/permissions"],
  ["GET", "/namespaces/:namespaceId/agents/:agentId"],
  ["PATCH", "/namespaces/:namespaceId/agents/:agentId", { configurationId: ":configurationId" }],
  ["DELETE", "/namespaces/:namespaceId/agents/:agentId"],
  ["GET", "/namespaces/:namespaceId/agents/:agentId/permissions"],
  ["POST", "/namespaces/:namespaceId/agents/:agentId/deploy"],
  ["POST", "/namespaces/:namespaceId/agents/:agentId/stop"],
  ["GET", "/namespaces/:namespaceId/agents/:agentId/deployments/:deploymentId"],
  ["POST", "/namespaces/:namespaceId/agents/:agentId/deployments/:deploymentId/diagnostics"],
  ["GET", "/namespaces/:namespaceId/agents/:agentId/revisions/:revisionId"],
  ["POST", "/namespaces/:namespaceId/agents/:agentId/revisions/:revisionId/redeploy"],
  ["GET", "/namespaces/:namespaceId/agents/:agentId/workspace/files/:name"],
  ["PUT", "/namespaces/:namespaceId/agents/:agentId/workspace/files/:name", { content: "x" }],
  ["GET", "/namespaces/:namespaceId/agents/provision/:workId"],
  ["POST", "/namespaces/:namespaceId/agents/provision/:workId/retry"],
  ["GET", "/namespaces/:namespaceId/configurations/:configurationId"],
  ["PATCH", "/namespaces/:namespaceId/configurations/:configurationId", { values: {} }],
  ["DELETE", "/namespaces/:namespaceId/configurations/:configurationId"],
  ["GET", "/namespaces/:namespaceId/presets/:presetId"],
  ["PATCH", "/namespaces/:namespaceId/presets/:presetId", { name: "renamed" }],
  ["DELETE", "/namespaces/:namespaceId/presets/:presetId"],
  ["GET", "/namespaces/:namespaceId/secrets/:secretId"],
  ["PATCH", "/namespaces/:namespaceId/secrets/:secretId", { value: "v" }],
  ["DELETE", "/namespaces/:namespaceId/secrets/:secretId"],
  ["GET", "/namespaces/:namespaceId/service-accounts/:serviceAccountId"],
  ["DELETE", "/namespaces/:namespaceId/service-accounts/:serviceAccountId"],
  ["POST", "/namespaces/:namespaceId/service-accounts/:serviceAccountId/credentials", {}],
  ["GET", "/namespaces/:namespaceId/credential-sources/:credentialSourceId"],
  ["DELETE", "/namespaces/:namespaceId/credential-sources/:credentialSourceId"],
  ["GET", "/namespaces/:namespaceId/iam/roles/:roleId"],
  ["DELETE", "/namespaces/:namespaceId/iam/roles/:roleId"],
  ["GET", "/namespaces/:namespaceId/iam/access-bindings/:bindingId"],
  ["DELETE", "/namespaces/:namespaceId/iam/access-bindings/:bindingId"],
  ["GET", "/namespaces/:namespaceId/iam/service-principals/:servicePrincipalId"],
  ["DELETE", "/namespaces/:namespaceId/iam/service-principals/:servicePrincipalId"],
  ["GET", "/iam/service-principals/:servicePrincipalId"],
  ["DELETE", "/iam/service-principals/:servicePrincipalId"],
  ["GET", "/api/auth/accounts/:userId"],
  ["POST", "/api/auth/accounts/:userId/enrol"],
  ["POST", "/api/auth/accounts/:userId/disable", { expectedVersion: 1 }],
  ["POST", "/api/auth/accounts/:userId/methods/:methodId/detach", { expectedVersion: 1 }],
  ["DELETE", "/api/auth/service-keys/:keyId"]
]

describe("hostile path parameters on every route that takes one", () => {
  it.layer(apiTestLayer(), { timeout: 120_000 })((it) => {
    it.effect("each answer is a 4xx envelope naming a parameter, never a 5xx, and nothing is written", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdmin("fuzz-paths@example.com")
        const ns = yield* seedNamespace("fuzz-paths")
        const post = (path: string, body: unknown) => Effect.map(send(baseUrl, "POST", `/namespaces/${ns}${path}`, admin.headers, body), (r) => expectData(r, 201).id as string)
        const configurationId = yield* post("/configurations", { kind: "agent", values: {} })
        // Real ids for every parameter but the attacked one; deleting one of them would show in the snapshot.
        const real: Record<string, string> = {
          namespaceId: ns,
          configurationId,
          agentId: yield* post("/agents", { name: "fuzz-paths-agent", configurationId }),
          secretId: yield* post("/secrets", { name: "fuzz-paths-secret", value: "v" }),
          presetId: yield* post("/presets", { name: "fuzz-paths-preset", template: {} }),
          serviceAccountId: yield* post("/service-accounts", { name: "fuzz-paths-account" }),
          roleId: yield* post("/iam/roles", { name: "fuzz-paths-role", permissions: ["agent:read"] }),
          servicePrincipalId: yield* post("/iam/service-principals", { name: "fuzz-paths-sp" }),
          deploymentId: RevisionId.make(),
          revisionId: RevisionId.make(),
          workId: WorkId.make(),
          name: "AGENTS.md",
          userId: admin.userId,
          methodId: admin.methodId,
          credentialSourceId: "cs_00000000-0000-4000-8000-000000000000",
          bindingId: "bnd_00000000-0000-4000-8000-000000000000",
          keyId: "key_00000000-0000-4000-8000-000000000000"
        }
        // An empty value names another route (`/namespaces/` is the list), so it is left out.
        const hostile = fc.oneof(
          urlText.filter((text) => text.length > 0),
          fc.tuple(fc.constantFrom(...Object.values(real)), fc.constantFrom("%00", "%20", "/..", "/.", "%2F..", "..", "%2e", ";a", "~", "%C0%AE", "a".repeat(300))).map(([id, tail]) => `${id}${tail}`),
          fc.constantFrom(...Object.values(real)).map((id) => id.toUpperCase())
        )
        const attack = fc.tuple(fc.constantFrom(...ROUTES), hostile, fc.nat()).map(([[method, template, body], value, pick]) => {
          const params = template.split("/").filter((part) => part.startsWith(":")).map((part) => part.slice(1))
          const attacked = params[pick % params.length]!
          const path = template.replace(/:(\w+)/g, (_m, name: string) => (name === attacked ? value : real[name]!))
          const text = body === undefined ? undefined : JSON.stringify(body).replace(/":(\w+)"/g, (_m, name: string) => `"${real[name]}"`)
          return { method, path, text, params }
        })
        const runtime = yield* Effect.runtime<SqlClient.SqlClient>()
        const snapshot = () => Runtime.runPromise(runtime)(worldSnapshot)
        const before = yield* Effect.promise(snapshot)
        yield* Effect.promise(() =>
          fc.assert(
            fc.asyncProperty(attack, async ({ method, path, text, params }) => {
              const result = await rawRequest(baseUrl, method, path, admin.headers, text)
              const says = `${method} ${path.slice(0, 300)} -> ${result.text.slice(0, 300)}`
              expectRefused(result, says)
              const details = typeof result.body === "object" ? result.body.error?.details ?? [] : []
              for (const detail of details) expect(params.map((p) => `/${p}`), says).toContain(detail.path)
              expect(await snapshot(), says).toBe(before)
            }),
            { seed: SEED, numRuns: RUNS * 6 }
          )
        )
      }), 60_000)
  })
})
