/**
 * SPEC 8 limits of the account endpoints (SPEC 4.1): `email` 3-320, `password` 12-128, `name`
 * 1-200, `roleId` 1-200, `expectedVersion` 1-2147483647, path and recovery ids 1-200. Each bound
 * is refused with 400 and its detail, the value at the bound is accepted, and a refused request
 * changes nothing.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { createAccount } from "../../../testing/identity.js"
import { TestServer } from "../../../testing/server.js"
import {
  accountCount,
  accountsTestLayer,
  expectData,
  expectError,
  seedAdministrator,
  send,
  signIn
} from "./support/accountsServer.js"

const PASSWORD_OK = "twelve chars"
type Detail = { readonly code: string; readonly path: string }
type Case = readonly [unknown, ReadonlyArray<Detail>]

describe("account endpoint limits (SPEC 8)", () => {
  it.layer(accountsTestLayer(), { timeout: 60_000 })((it) => {
    it.effect("POST /accounts: an email over 200 characters without a name is accepted; one over 320 once lowercased is 400 at /email", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdministrator("limits-email-admin@example.test")
        // The name defaults to the email, but a name is at most 200 characters: the first 200 of it.
        const long = `${"b".repeat(307)}@example.test`
        expectData(yield* send(baseUrl, "POST", "/api/auth/accounts", admin.headers, { email: long, password: PASSWORD_OK }), 201, {
          email: long,
          id: expect.stringMatching(/^usr_/),
          name: long.slice(0, 200),
          principalId: expect.stringMatching(/^prn_/)
        })
        // U+0130 lowercases to two code points: 200 of them are 400 once normalized (SPEC 5.7).
        const before = yield* accountCount
        for (const email of ["\u0130".repeat(200), `${"\u0130".repeat(160)}@example.test`]) {
          expectError(yield* send(baseUrl, "POST", "/api/auth/accounts", admin.headers, { email, password: PASSWORD_OK, name: "n" }), 400, "INVALID_REQUEST", [
            { code: "TOO_LONG", path: "/email" }
          ])
        }
        expect(yield* accountCount).toBe(before)
        // Characters, not UTF-16 code units: 300 emoji and a domain are 313 characters (613 units).
        const wide = `${"\u{1F600}".repeat(300)}@example.test`
        expect((yield* send(baseUrl, "POST", "/api/auth/accounts", admin.headers, { email: wide, password: PASSWORD_OK, name: "n" })).status).toBe(201)
        expect(yield* accountCount).toBe(before + 1)
      }))

    it.effect("POST /accounts: email, password, name, roleId and codehost bounds are 400 with details; nothing is written", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdministrator("limits-admin@example.test")
        const body = { email: "new@example.test", password: PASSWORD_OK }
        const cases: ReadonlyArray<Case> = [
          [{ ...body, email: "ab" }, [{ code: "INVALID_VALUE", path: "/email" }]],
          [{ ...body, email: `${"a".repeat(308)}@example.test` }, [{ code: "TOO_LONG", path: "/email" }]],
          [{ ...body, email: 5 }, [{ code: "INVALID_TYPE", path: "/email" }]],
          [{ password: PASSWORD_OK }, [{ code: "REQUIRED", path: "/email" }]],
          [{ ...body, password: "x".repeat(11) }, [{ code: "INVALID_VALUE", path: "/password" }]],
          [{ ...body, password: "x".repeat(129) }, [{ code: "TOO_LONG", path: "/password" }]],
          [{ email: body.email }, [{ code: "REQUIRED", path: "/password" }]],
          [{ ...body, name: "" }, [{ code: "INVALID_VALUE", path: "/name" }]],
          [{ ...body, name: "n".repeat(201) }, [{ code: "TOO_LONG", path: "/name" }]],
          // Unpaired surrogates: stored as text they would become U+FFFD, other text than answered.
          [{ ...body, email: "new\ud800@example.test" }, [{ code: "INVALID_VALUE", path: "/email" }]],
          [{ ...body, password: `${PASSWORD_OK}\udfff` }, [{ code: "INVALID_VALUE", path: "/password" }]],
          [{ ...body, name: "Ada \ud800" }, [{ code: "INVALID_VALUE", path: "/name" }]],
          [{ ...body, roleId: "" }, [{ code: "INVALID_VALUE", path: "/roleId" }]],
          [{ ...body, roleId: "r".repeat(201) }, [{ code: "TOO_LONG", path: "/roleId" }]],
          [{ ...body, codehost: {} }, [{ code: "REQUIRED", path: "/codehost/subject" }]],
          [{ ...body, codehost: { subject: "1".repeat(21) } }, [{ code: "TOO_LONG", path: "/codehost/subject" }]],
          [{ ...body, codehost: { subject: "12", login: "x" } }, [{ code: "UNKNOWN_FIELD", path: "/codehost/login" }]]
        ]
        const before = yield* accountCount
        for (const [payload, details] of cases) {
          expectError(yield* send(baseUrl, "POST", "/api/auth/accounts", admin.headers, payload), 400, "INVALID_REQUEST", details)
        }
        expect(yield* accountCount).toBe(before)
        // Values at the bounds are accepted.
        const longest = `${"a".repeat(307)}@example.test`
        const created = yield* send(baseUrl, "POST", "/api/auth/accounts", admin.headers, {
          email: longest,
          password: "p".repeat(128),
          name: "n".repeat(200)
        })
        expect(created.status, created.text).toBe(201)
        expect(created.body.data).toMatchObject({ email: longest, name: "n".repeat(200) })
        const shortest = yield* send(baseUrl, "POST", "/api/auth/accounts", admin.headers, { email: "a@b", password: PASSWORD_OK })
        expect(shortest.status, shortest.text).toBe(201)
        // Characters, not UTF-16 code units: 128 emoji are a 128-character password (256 units).
        const emoji = "\u{1F600}"
        const wide = { email: "wide@example.test", password: emoji.repeat(128), name: emoji.repeat(200) }
        const tooWide = yield* send(baseUrl, "POST", "/api/auth/accounts", admin.headers, { ...wide, password: emoji.repeat(129) })
        expectError(tooWide, 400, "INVALID_REQUEST", [{ code: "TOO_LONG", path: "/password" }])
        const widest = yield* send(baseUrl, "POST", "/api/auth/accounts", admin.headers, wide)
        expect(widest.status, widest.text).toBe(201)
        expect((yield* signIn(baseUrl, wide.email, wide.password)).status).toBe(200)
        expect(yield* accountCount).toBe(before + 3)
      }))

    it.effect("expectedVersion is an integer 1-2147483647 on every guarded mutation; ids are 1-200", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdministrator("limits-admin2@example.test")
        const target = yield* createAccount("limits-target@example.test")
        const base = `/api/auth/accounts/${target.userId}`
        const versionCases: ReadonlyArray<Case> = [
          [{ expectedVersion: 0 }, [{ code: "INVALID_VALUE", path: "/expectedVersion" }]],
          [{ expectedVersion: 2_147_483_648 }, [{ code: "INVALID_VALUE", path: "/expectedVersion" }]],
          [{ expectedVersion: 1.5 }, [{ code: "INVALID_VALUE", path: "/expectedVersion" }]],
          [{ expectedVersion: "1" }, [{ code: "INVALID_TYPE", path: "/expectedVersion" }]],
          [{}, [{ code: "REQUIRED", path: "/expectedVersion" }]]
        ]
        const guarded = [
          `${base}/disable`,
          `${base}/enable`,
          `${base}/revoke`,
          `${base}/methods/${target.methodId}/detach`,
          `${base}/providers/codehost`,
          `${base}/providers/idprovider`
        ]
        for (const path of guarded) {
          const subject = path.endsWith("/codehost") || path.endsWith("/idprovider") ? { subject: "42" } : {}
          for (const [payload, details] of versionCases) {
            expectError(
              yield* send(baseUrl, "POST", path, admin.headers, { ...subject, ...(payload as object) }),
              400,
              "INVALID_REQUEST",
              details
            )
          }
          // The largest version is well-formed: only stale (409).
          expectError(
            yield* send(baseUrl, "POST", path, admin.headers, { ...subject, expectedVersion: 2_147_483_647 }),
            409,
            "RESOURCE_CONFLICT"
          )
        }
        const long = "u".repeat(201)
        expectError(yield* send(baseUrl, "GET", `/api/auth/accounts/${long}`, admin.headers), 400, "INVALID_REQUEST", [
          { code: "TOO_LONG", path: "/userId" }
        ])
        expectError(yield* send(baseUrl, "GET", `/api/auth/accounts/${"u".repeat(200)}`, admin.headers), 404, "NOT_FOUND")
        expectError(
          yield* send(baseUrl, "POST", `/api/auth/accounts/${long}/disable`, admin.headers, { expectedVersion: 1 }),
          400,
          "INVALID_REQUEST",
          [{ code: "TOO_LONG", path: "/userId" }]
        )
        expectError(
          yield* send(baseUrl, "POST", `${base}/methods/${"m".repeat(201)}/detach`, admin.headers, { expectedVersion: 1 }),
          400,
          "INVALID_REQUEST",
          [{ code: "TOO_LONG", path: "/methodId" }]
        )
        // Nothing above changed the account.
        const read = yield* send(baseUrl, "GET", base, admin.headers)
        expectData(read, 200, {
          disabled: false,
          methods: [{ methodId: target.methodId, providerId: "password", subject: target.email }],
          principalId: target.principalId,
          userId: target.userId,
          version: 1
        })
      }))

    it.effect("POST /recovery: ids 1-200 and expectedVersion bounds are 400 with details", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdministrator("limits-admin3@example.test")
        const body = { expectedCurrentUserId: admin.account.userId, expectedVersion: 1, userId: admin.account.userId }
        const cases: ReadonlyArray<Case> = [
          [{ ...body, expectedCurrentUserId: "" }, [{ code: "INVALID_VALUE", path: "/expectedCurrentUserId" }]],
          [{ ...body, expectedCurrentUserId: "u".repeat(201) }, [{ code: "TOO_LONG", path: "/expectedCurrentUserId" }]],
          [{ ...body, userId: "" }, [{ code: "INVALID_VALUE", path: "/userId" }]],
          [{ ...body, userId: "u".repeat(201) }, [{ code: "TOO_LONG", path: "/userId" }]],
          [{ ...body, expectedVersion: 0 }, [{ code: "INVALID_VALUE", path: "/expectedVersion" }]],
          [{ ...body, expectedVersion: 2_147_483_648 }, [{ code: "INVALID_VALUE", path: "/expectedVersion" }]],
          [{ ...body, extra: true }, [{ code: "UNKNOWN_FIELD", path: "/extra" }]]
        ]
        for (const [payload, details] of cases) {
          expectError(yield* send(baseUrl, "POST", "/api/auth/recovery", admin.headers, payload), 400, "INVALID_REQUEST", details)
        }
        expectError(yield* send(baseUrl, "GET", "/api/auth/recovery", admin.headers), 404, "NOT_FOUND")
      }))
  })
})
