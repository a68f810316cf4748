/**
 * What every request string must be before any route sees it (issue 10 §5): no NUL in a body
 * string, a body key, a path parameter or a query parameter; a JSON body in valid UTF-8; no
 * `__proto__` / `constructor` / `prototype` map keys; path parameters whose percent-escapes
 * decode, answered like any other malformed parameter at any length (never a 405 naming the
 * refused method); and `Cache-Control: no-store` on API responses.
 */
import { describe, expect, layer } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { NamespaceId, SecretId } from "@svc/core/schema"
import { Effect, Layer } from "effect"
import { call, LogCapture, TestServer } from "../../../testing/server.js"
import { apiTestLayer, expectData, expectError, type Headers, seedAdmin, seedNamespace, seedServiceKey, send } from "./support/iamServer.js"

/** Every row a refused request could have written. */
const snapshot = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql<{ row: string }>`
    SELECT (SELECT count(*) FROM audit_events)::text || '/' || (SELECT count(*) FROM service_keys)::text || '/' ||
      (SELECT count(*) FROM accounts)::text || '/' || (SELECT count(*) FROM secrets)::text || '/' ||
      (SELECT count(*) FROM configurations)::text || '/' || (SELECT count(*) FROM presets)::text || '/' ||
      (SELECT count(*) FROM agent_provisioning)::text AS row
  `
  return rows[0]!.row
})

const raw = (baseUrl: string, method: string, path: string, headers: Headers, body: string | Uint8Array) =>
  Effect.promise(() => call(`${baseUrl}${path}`, { method, headers: { ...headers, "content-type": "application/json" }, body }))

describe("request boundary", () => {
  layer(apiTestLayer().pipe(Layer.provideMerge(LogCapture.layer)), { timeout: 120_000, excludeTestServices: true })((it) => {
    it.effect("NUL in a body string, body key, path or query parameter is 400 INVALID_REQUEST at its pointer, with no outage logged", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const logs = yield* LogCapture
        const admin = yield* seedAdmin("boundary-nul@example.com")
        const service = yield* seedServiceKey("boundary-nul-sp")
        const ns = yield* seedNamespace("boundary-nul")
        const before = yield* snapshot
        const cases: ReadonlyArray<readonly [string, string, unknown, ReadonlyArray<{ code: string; path: string }>]> = [
          ["POST", "/api/auth/sign-in/email", { email: "a\u0000b@example.com", password: "a-password-long-enough" }, [{ code: "INVALID_FORMAT", path: "/email" }]],
          ["POST", "/api/auth/service-keys", { servicePrincipalId: "sp_\u0000", name: "n" }, [{ code: "INVALID_FORMAT", path: "/servicePrincipalId" }]],
          ["POST", "/api/auth/service-keys", { servicePrincipalId: service.principalId, name: "n\u0000" }, [{ code: "INVALID_FORMAT", path: "/name" }]],
          ["DELETE", "/api/auth/service-keys/key_%00", undefined, [{ code: "INVALID_FORMAT", path: "/keyId" }]],
          ["POST", "/api/auth/accounts", { email: "a\u0000b@example.com", password: "a-password-long-enough" }, [{ code: "INVALID_FORMAT", path: "/email" }]],
          ["GET", "/api/auth/accounts/usr_%00", undefined, [{ code: "INVALID_FORMAT", path: "/userId" }]],
          ["GET", `/namespaces/${ns}/secrets?cursor=%00`, undefined, [{ code: "INVALID_FORMAT", path: "/cursor" }]],
          ["GET", `/namespaces/${ns}/secrets?a%00=1`, undefined, [{ code: "INVALID_FORMAT", path: "/a\u0000" }]],
          ["POST", `/namespaces/${ns}/configurations`, { kind: "agent", values: { "a\u0000": 1, b: ["x\u0000"] } }, [
            { code: "INVALID_FORMAT", path: "/values/a\u0000" },
            { code: "INVALID_FORMAT", path: "/values/b/0" }
          ]],
          ["POST", `/namespaces/${ns}/presets`, { name: "p", template: { configuration: { values: { x: "\u0000" } } } }, [
            { code: "INVALID_FORMAT", path: "/template/configuration/values/x" }
          ]]
        ]
        for (const [method, path, body, details] of cases) {
          const result = yield* send(baseUrl, method, path, admin.headers, body)
          expectError(result, 400, "INVALID_REQUEST", details)
        }
        expect(yield* snapshot).toBe(before)
        // The capture works (each request's access line is there), and none of them looked like an outage.
        expect(logs.entries.filter((entry) => entry.message === "http request" || (Array.isArray(entry.message) && entry.message.includes("http request"))).length)
          .toBeGreaterThanOrEqual(cases.length)
        expect(logs.entries.filter((entry) => /database|unhandled|unavailable/i.test(JSON.stringify(entry.message) + entry.cause))).toEqual([])
      }))

    it.effect("a malformed query parameter on a path not routed for the method is that routing miss (404, or 405 with Allow), not a 400", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdmin("boundary-query-miss@example.com")
        const ns = yield* seedNamespace("boundary-query-miss")
        expectError(yield* send(baseUrl, "GET", `/namespaces/${ns}/no-such-list?cursor=%00`, admin.headers), 404, "NOT_FOUND")
        const refused = yield* send(baseUrl, "PUT", `/namespaces/${ns}/secrets?cursor=%ZZ`, admin.headers)
        expectError(refused, 405, "METHOD_NOT_ALLOWED")
        expect(refused.headers.get("allow")).toBe("GET, POST")
        // The same query on the routed method is the parameter's error.
        expectError(yield* send(baseUrl, "GET", `/namespaces/${ns}/secrets?cursor=%ZZ`, admin.headers), 400, "INVALID_REQUEST", [
          { code: "INVALID_FORMAT", path: "/cursor" }
        ])
      }))

    it.effect("a JSON body that is not valid UTF-8 is 400 INVALID_REQUEST INVALID_FORMAT at the root, and nothing is stored", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdmin("boundary-utf8@example.com")
        const ns = yield* seedNamespace("boundary-utf8")
        const before = yield* snapshot
        for (const bytes of [[0xff, 0xfe], [0xc3], [0xed, 0xa0, 0x80], [0xc0, 0xaf]]) {
          const body = Buffer.concat([Buffer.from('{"name":"x'), Buffer.from(bytes), Buffer.from('","value":"v"}')])
          expectError(yield* raw(baseUrl, "POST", `/namespaces/${ns}/secrets`, admin.headers, body), 400, "INVALID_REQUEST", [{ code: "INVALID_FORMAT", path: "" }])
        }
        expect(yield* snapshot).toBe(before)
        // A real U+FFFD, sent as valid UTF-8, is an ordinary character.
        expectData(yield* raw(baseUrl, "POST", `/namespaces/${ns}/secrets`, admin.headers, '{"name":"x\ufffd","value":"v"}'), 201)
      }))

    it.effect("__proto__, constructor and prototype map keys are 400 INVALID_VALUE at their pointer, and nothing is stored", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdmin("boundary-proto@example.com")
        const ns = yield* seedNamespace("boundary-proto")
        const source = JSON.stringify({ source: { kind: "secret", namespaceId: NamespaceId.make(), id: SecretId.make() } })
        const before = yield* snapshot
        const cases: ReadonlyArray<readonly [string, string, string]> = [
          [`/namespaces/${ns}/configurations`, `{"kind":"agent","values":{"__proto__":{"a":1}}}`, "/values/__proto__"],
          [`/namespaces/${ns}/configurations`, `{"kind":"agent","values":{"ok":{"constructor":1}}}`, "/values/ok/constructor"],
          [`/namespaces/${ns}/configurations`, `{"kind":"agent","values":{},"secretBindings":{"__proto__":${source}}}`, "/secretBindings/__proto__"],
          [`/namespaces/${ns}/configurations`, `{"kind":"agent","values":{},"secretBindings":{"prototype":${source}}}`, "/secretBindings/prototype"],
          [`/namespaces/${ns}/presets`, `{"name":"p","template":{"variables":{"__proto__":{"type":"string"}}}}`, "/template/variables/__proto__"],
          [`/namespaces/${ns}/agents/provision`, `{"requestId":"req_00000000-0000-4000-8000-000000000000","name":"a","variables":{"constructor":"x"}}`, "/variables/constructor"],
          [`/namespaces/${ns}/agents`, `{"name":"a","configurationId":"cfg_00000000-0000-4000-8000-000000000000","plugins":{"__proto__":{"enabled":true}}}`, "/plugins/__proto__"]
        ]
        for (const [path, body, pointer] of cases) {
          expectError(yield* raw(baseUrl, "POST", path, admin.headers, body), 400, "INVALID_REQUEST", [{ code: "INVALID_VALUE", path: pointer }])
        }
        expect(yield* snapshot).toBe(before)
      }))

    it.effect("malformed and over-long path parameters answer what a short malformed one answers, never a self-contradicting 405", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdmin("boundary-path@example.com")
        const long = "x".repeat(2000)
        // [method, path, expected status, code, details]
        const cases: ReadonlyArray<readonly [string, string, number, string, ReadonlyArray<{ code: string; path: string }> | undefined]> = [
          ...["%", "%ZZ", "%ff", "%C3", "a%2"].flatMap((bad) => [
            ["GET", `/api/auth/accounts/${bad}`, 400, "INVALID_REQUEST", [{ code: "INVALID_FORMAT", path: "/userId" }]] as const,
            ["GET", `/namespaces/${bad}`, 400, "INVALID_REQUEST", [{ code: "INVALID_FORMAT", path: "/namespaceId" }]] as const,
            ["DELETE", `/namespaces/${bad}`, 400, "INVALID_REQUEST", [{ code: "INVALID_FORMAT", path: "/namespaceId" }]] as const,
            ["DELETE", `/api/auth/service-keys/${bad}`, 400, "INVALID_REQUEST", [{ code: "INVALID_FORMAT", path: "/keyId" }]] as const
          ]),
          ["GET", "/api/auth/accounts/usr_bad", 404, "NOT_FOUND", undefined],
          ["GET", `/api/auth/accounts/usr_${long}`, 400, "INVALID_REQUEST", [{ code: "TOO_LONG", path: "/userId" }]],
          ["GET", "/namespaces/ns_bad", 400, "INVALID_REQUEST", [{ code: "INVALID_FORMAT", path: "/namespaceId" }]],
          ["GET", `/namespaces/${long}`, 400, "INVALID_REQUEST", [{ code: "INVALID_FORMAT", path: "/namespaceId" }]],
          ["DELETE", `/namespaces/${long}`, 400, "INVALID_REQUEST", [{ code: "INVALID_FORMAT", path: "/namespaceId" }]],
          ["DELETE", `/api/auth/service-keys/key_${long}`, 400, "INVALID_REQUEST", [{ code: "TOO_LONG", path: "/keyId" }]],
          ["GET", `/namespaces/${long}/secrets`, 400, "INVALID_REQUEST", [{ code: "INVALID_FORMAT", path: "/namespaceId" }]],
          // A method the path does not serve stays a 405 whose Allow names only what it serves.
          ["DELETE", `/api/auth/accounts/${long}`, 405, "METHOD_NOT_ALLOWED", undefined],
          ["PUT", `/namespaces/%ZZ`, 405, "METHOD_NOT_ALLOWED", undefined]
        ]
        for (const [method, path, status, code, details] of cases) {
          const result = yield* send(baseUrl, method, path, admin.headers)
          expectError(result, status, code, details)
          const allow = result.headers.get("allow")
          if (status === 405) {
            expect(allow?.split(", ")).not.toContain(method)
            expect(result.body.error.message).not.toContain(`use ${method}`)
          } else {
            expect(allow).toBeNull()
          }
        }
      }))

    it.effect("every API response says Cache-Control: no-store", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdmin("boundary-cache@example.com")
        const service = yield* seedServiceKey("boundary-cache-sp")
        const ns = yield* seedNamespace("boundary-cache")
        const results = [
          yield* send(baseUrl, "POST", "/api/auth/service-keys", admin.headers, { servicePrincipalId: service.principalId, name: "cache" }),
          yield* send(baseUrl, "POST", "/api/auth/sign-in/email", {}, { email: "boundary-cache@example.com", password: "wrong-password-here" }),
          yield* send(baseUrl, "GET", "/api/auth/session", admin.headers),
          yield* send(baseUrl, "GET", `/namespaces/${ns}/secrets`, admin.headers),
          yield* send(baseUrl, "POST", `/namespaces/${ns}/secrets`, admin.headers, { name: "cache", value: "v" }),
          yield* send(baseUrl, "GET", "/namespaces", service.headers),
          yield* send(baseUrl, "GET", "/no/such/route", {}),
          yield* send(baseUrl, "GET", "/healthz", {}),
          yield* send(baseUrl, "GET", "/openapi.json", {})
        ]
        expect(results.map((result) => result.status)).toEqual([201, 401, 200, 200, 201, 200, 404, 200, 200])
        for (const result of results) expect(result.headers.get("cache-control")).toBe("no-store")
      }))
  })
})
