/**
 * The authorization matrix: every protected route of SvcApi (found with HttpApi.reflect, so a
 * new route is covered the moment it is added) against every kind of caller, asserting the
 * exact status. A protected route without an expectation here fails the test.
 */
import { HttpApi } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { Authentication, SvcApi } from "@svc/core/api"
import { BuiltinRoles } from "@svc/core/iam"
import { Effect } from "effect"
import {
  bindInstallationAdmin,
  bindRole,
  createAccount,
  createServicePrincipal,
  insertServiceKey,
  signedInSession
} from "../../../testing/identity.js"
import { TestServer } from "../../../testing/server.js"
import { withBundledPlugins } from "./support/pluginsWorld.js"
import {
  apiTestLayer,
  expectError,
  type Headers,
  ORIGIN,
  seedNamespace,
  send,
  withKey,
  withSession
} from "./support/iamServer.js"
import { Callers, type Caller, unauthenticated, type Judged, type Fixture, type RouteCase, unique } from "./support/authzFixtures.js"
import { routesA } from "./support/authzRoutesA.js"
import { routesB } from "./support/authzRoutesB.js"

const routes: Record<string, RouteCase> = { ...routesA, ...routesB }

interface ProtectedRoute {
  readonly key: string
  readonly method: string
}

/** Every route of SvcApi behind the Authentication middleware. */
const protectedRoutes = (): Array<ProtectedRoute> => {
  const found: Array<ProtectedRoute> = []
  HttpApi.reflect(SvcApi, {
    onGroup: () => {},
    onEndpoint: ({ endpoint, middleware }) => {
      if ([...middleware].some((tag) => tag.key === Authentication.key)) {
        found.push({ key: `${endpoint.method} ${endpoint.path}`, method: endpoint.method })
      }
    }
  })
  return found
}

describe("the authorization matrix", () => {
  it("has an expectation for every protected route, and no stale ones", () => {
    const keys = protectedRoutes().map((route) => route.key)
    expect(keys.filter((key) => routes[key] === undefined), "protected routes without an expectation").toEqual([])
    expect(Object.keys(routes).filter((key) => !keys.includes(key)), "expectations for routes that do not exist").toEqual([])
  })

  it.layer(apiTestLayer(withBundledPlugins), { timeout: 300_000 })((it) => {
    it.effect("every caller gets the exact status on every protected route", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const ns = yield* seedNamespace("matrix")
        const otherNs = yield* seedNamespace("matrix-other")
        const admin = yield* createAccount("matrix-admin@example.com")
        yield* bindInstallationAdmin(admin.principalId)
        const human = yield* createAccount("matrix-human@example.com")
        // A fully privileged Installation principal whose keys are revoked or expired.
        const privileged = yield* createServicePrincipal("matrix-privileged")
        yield* bindInstallationAdmin(privileged)
        const revoked = yield* insertServiceKey(privileged, { revoked: true })
        const expired = yield* insertServiceKey(privileged, { expiresAt: new Date(Date.now() - 1000) })
        // A Namespace administrator's key, of the other Namespace.
        const foreign = yield* createServicePrincipal("matrix-foreign", otherNs)
        yield* bindRole(foreign, BuiltinRoles.namespaceAdmin.id, { kind: "namespace", id: otherNs })
        const bare = yield* createServicePrincipal("matrix-bare")
        let accounts = 0
        const fixture: Fixture = {
          ns,
          otherNs,
          admin,
          human,
          freshServicePrincipal: () => createServicePrincipal(`fresh-${unique()}`),
          freshAccount: () => createAccount(`target-${++accounts}-${unique()}@example.com`)
        }
        // Fresh credentials per route, so a route that ends a session cannot affect the next.
        const credentials = (caller: Caller): Effect.Effect<Headers, unknown, SqlClient.SqlClient> => {
          switch (caller) {
            case "anonymous":
              return Effect.succeed({})
            case "revokedKey":
              return Effect.succeed(withKey(revoked.key))
            case "expiredKey":
              return Effect.succeed(withKey(expired.key))
            case "foreignNamespaceKey":
              return Effect.map(insertServiceKey(foreign, { namespaceId: otherNs }), (k) => withKey(k.key))
            case "keyWithoutGrant":
              return Effect.map(insertServiceKey(bare), (k) => withKey(k.key))
            case "humanWithoutGrant":
              return Effect.map(signedInSession(human.userId), (s) => withSession(s.token))
            case "administrator":
              return Effect.map(signedInSession(admin.userId), (s) => withSession(s.token))
          }
        }
        const mismatches: Array<string> = []
        let checked = 0
        for (const route of protectedRoutes()) {
          const routeCase = routes[route.key]
          if (routeCase === undefined) continue
          const prepared = yield* routeCase.prepare(fixture)
          // The administrator goes last: its request may change what the others would see.
          for (const caller of Callers) {
            const expected = (unauthenticated as ReadonlyArray<string>).includes(caller) ? 401 : routeCase.expect[caller as Judged]
            const headers = yield* credentials(caller)
            const result = yield* send(baseUrl, route.method, prepared.path, headers, prepared.body)
            checked++
            if (result.status !== expected) {
              mismatches.push(`${route.key} as ${caller}: expected ${expected}, got ${result.status} ${result.text.slice(0, 160)}`)
            } else if (expected >= 400) {
              const usual = { 401: "UNAUTHENTICATED", 403: "FORBIDDEN", 404: "NOT_FOUND", 409: "RESOURCE_CONFLICT", 503: "DEPENDENCY_UNAVAILABLE" }[expected]
              expect(result.body.error.code).toBe(caller === "administrator" ? routeCase.code ?? usual : usual)
            }
          }
        }
        expect(mismatches).toEqual([])
        expect(checked).toBe(protectedRoutes().length * Callers.length)
        expect(checked).toBeGreaterThanOrEqual(30 * Callers.length)
      }))

    it.effect("credentials: Authorization headers, invalid keys beside a valid cookie, forged, expired and revoked cookies are 401", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* createAccount("matrix-credentials@example.com")
        yield* bindInstallationAdmin(admin.principalId)
        const session = yield* signedInSession(admin.userId)
        const cookie = withSession(session.token)
        const sp = yield* createServicePrincipal("matrix-credentials-sp")
        yield* bindInstallationAdmin(sp)
        const key = yield* insertServiceKey(sp)
        const get = (headers: Headers) => send(baseUrl, "GET", "/installation", headers)
        expect((yield* get(cookie)).status).toBe(200)
        expect((yield* get(withKey(key.key))).status).toBe(200)
        expectError(yield* get({ authorization: `Bearer ${key.key}` }), 401, "UNAUTHENTICATED")
        expectError(yield* get({ ...cookie, authorization: "Basic YWRtaW46YWRtaW4=" }), 401, "UNAUTHENTICATED")
        expectError(yield* get({ ...withKey(key.key), authorization: `Bearer ${key.key}` }), 401, "UNAUTHENTICATED")
        // A supplied key wins over the cookie, and an invalid one never falls back to it.
        expectError(yield* get({ ...cookie, "x-api-key": "svck_not-a-real-key" }), 401, "UNAUTHENTICATED")
        expectError(yield* get({ ...cookie, "x-api-key": "" }), 401, "UNAUTHENTICATED")
        // Forged, expired and revoked cookies.
        expectError(yield* get(withSession(`${session.token}x`)), 401, "UNAUTHENTICATED")
        expectError(yield* get(withSession("svcs_forged")), 401, "UNAUTHENTICATED")
        const sql = yield* SqlClient.SqlClient
        const expiring = yield* signedInSession(admin.userId)
        yield* sql`UPDATE sessions SET expires_at = now() - interval '1 second' WHERE id = ${expiring.id}`
        expectError(yield* get(withSession(expiring.token)), 401, "UNAUTHENTICATED")
        const revoking = yield* signedInSession(admin.userId)
        yield* sql`UPDATE sessions SET revoked_at = now() WHERE id = ${revoking.id}`
        expectError(yield* get(withSession(revoking.token)), 401, "UNAUTHENTICATED")
        // A mutation with a cookie from an untrusted Origin is refused; a key needs no Origin.
        const foreignOrigin = yield* send(baseUrl, "POST", "/iam/service-principals", { ...cookie, origin: "http://evil.example" }, { name: "x" })
        expectError(foreignOrigin, 403, "FORBIDDEN")
        expect((yield* send(baseUrl, "POST", "/iam/service-principals", withKey(key.key), { name: "by-key" })).status).toBe(201)
        expect(ORIGIN).toBe(cookie.origin)
      }))

    it.effect("caller-supplied identity headers are not authorization evidence (SPEC 5.1)", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* createAccount("matrix-claimed-admin@example.com")
        yield* bindInstallationAdmin(admin.principalId)
        const member = yield* createAccount("matrix-claimant@example.com")
        const memberCookie = withSession((yield* signedInSession(member.userId)).token)
        const claims: Headers = {
          "x-forwarded-user": admin.email,
          "x-forwarded-email": admin.email,
          "x-remote-user": admin.userId,
          "x-svc-principal-id": admin.principalId,
          "x-user-id": admin.userId,
          forwarded: "for=127.0.0.1;by=trusted"
        }
        expectError(yield* send(baseUrl, "GET", "/installation", claims), 401, "UNAUTHENTICATED")
        expectError(yield* send(baseUrl, "GET", "/installation", { ...memberCookie, ...claims }), 403, "FORBIDDEN")
        expectError(yield* send(baseUrl, "POST", "/iam/service-principals", { ...memberCookie, ...claims }, { name: "claimed" }), 403, "FORBIDDEN")
      }))
  })
})
