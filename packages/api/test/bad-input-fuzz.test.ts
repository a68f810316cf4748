/**
 * Hostile bodies against every create and update route of the tenancy capability (Namespaces,
 * Secrets, Configurations, Presets), of Agents and of Agent provisioning, generated with
 * fast-check from a fixed seed and a bounded number of runs so `npm test` is repeatable:
 * - bodies that are invalid by construction (wrong types, huge strings, deep nesting, control
 *   characters, NUL, `__proto__`-like map keys, unknown fields, wrong ID prefixes, missing
 *   fields, non-object or broken JSON)
 *   must get a 4xx error envelope and write nothing;
 * - bodies drawn from the whole JSON value space inside the right shape (any Unicode, any
 *   number) may succeed or be refused, but never with a 5xx, and a refusal writes nothing.
 */
import { describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { NamespaceId, RequestId, SecretId } from "@svc/core/schema"
import { Effect, Runtime } from "effect"
import fc from "fast-check"
import { call, REQUEST_ID, TestServer } from "../../../testing/server.js"
import { apiTestLayer, expectData, seedAdmin, seedNamespace, send } from "./support/iamServer.js"
import { withBundledPlugins } from "./support/pluginsWorld.js"

const SEED = 20261122
const RUNS = 60

/** `nullableObject`: an object (or array of objects) where `null` is also valid, so neither null nor [] is a wrong type. */
type FieldKind = "name" | "secretValue" | "object" | "nullableObject" | "enum" | "bindings" | "template" | "reference"

interface Target {
  readonly route: string
  readonly method: "POST" | "PATCH"
  readonly path: string
  /** A valid body; mutations start from it. */
  readonly valid: Record<string, unknown>
  readonly fields: Record<string, FieldKind>
  readonly required: ReadonlyArray<string>
  /** What the route may write: compared before and after each refused request. */
  readonly snapshot: Effect.Effect<string, unknown, SqlClient.SqlClient>
}

/** Values that are not of the field's kind. */
const wrongType = (kind: FieldKind): fc.Arbitrary<unknown> => {
  const scalars = fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.boolean(), fc.constant(null))
  switch (kind) {
    case "name":
    case "secretValue":
    case "enum":
    case "reference":
      return fc.oneof(scalars, fc.array(fc.string(), { maxLength: 3 }), fc.dictionary(fc.string(), fc.string(), { maxKeys: 2 }))
    case "object":
    case "bindings":
    case "template":
      return fc.oneof(scalars, fc.string(), fc.array(fc.jsonValue(), { maxLength: 3 }))
    case "nullableObject":
      return fc.oneof(fc.integer(), fc.boolean(), fc.string(), fc.array(fc.integer(), { minLength: 1, maxLength: 3 }))
  }
}

const CONTROL = fc.integer({ min: 0, max: 0x1f }).map((code) => String.fromCharCode(code))
const UUID = fc.uuid({ version: 4 })
const WRONG_PREFIXES = ["cfg_", "ns_", "agt_", "rev_", "sa_", "pre_", "SEC_", "sec-", ""]

/** One mutation that makes any body of the target invalid. */
const invalidMutation = (target: Target): fc.Arbitrary<(body: Record<string, unknown>) => unknown> => {
  const field = fc.constantFrom(...Object.keys(target.fields))
  const mutations: Array<fc.Arbitrary<(body: Record<string, unknown>) => unknown>> = [
    // Unknown field.
    fc.string({ minLength: 1, maxLength: 40 })
      .filter((key) => !(key in target.fields))
      .chain((key) => fc.jsonValue().map((value) => (body: Record<string, unknown>) => ({ ...body, [key]: value }))),
    // Wrong type.
    field.chain((name) => wrongType(target.fields[name]!).map((value) => (body: Record<string, unknown>) => ({ ...body, [name]: value }))),
    // Deep nesting, below or beside the fields.
    fc.tuple(field, fc.integer({ min: 65, max: 400 })).map(([name, depth]) => (body: Record<string, unknown>) => {
      let deep: unknown = body[name] ?? 1
      for (let i = 0; i < depth; i++) deep = i % 2 === 0 ? { d: deep } : [deep]
      return { ...body, [name]: deep }
    }),
    // Not an object at all.
    fc.oneof(fc.array(fc.jsonValue(), { maxLength: 3 }), fc.string(), fc.integer(), fc.constant(null)).map((value) => () => value)
  ]
  if (target.required.length > 0) {
    mutations.push(fc.constantFrom(...target.required).map((name) => (body: Record<string, unknown>) => {
      const { [name]: _removed, ...rest } = body
      return rest
    }))
  }
  const named = Object.entries(target.fields).filter(([, kind]) => kind === "name").map(([name]) => name)
  if (named.length > 0) {
    // Control characters and over-long names.
    mutations.push(fc.tuple(fc.constantFrom(...named), fc.string({ maxLength: 20 }), CONTROL, fc.string({ maxLength: 20 }))
      .map(([name, a, c, b]) => (body: Record<string, unknown>) => ({ ...body, [name]: `x${a}${c}${b}` })))
    mutations.push(fc.tuple(fc.constantFrom(...named), fc.integer({ min: 201, max: 100_000 }))
      .map(([name, length]) => (body: Record<string, unknown>) => ({ ...body, [name]: "n".repeat(length) })))
  }
  const texts = Object.entries(target.fields).filter(([, kind]) => kind !== "object" && kind !== "nullableObject" && kind !== "bindings" && kind !== "template").map(([name]) => name)
  if (texts.length > 0) {
    // NUL anywhere in a string field.
    mutations.push(fc.tuple(fc.constantFrom(...texts), fc.string({ maxLength: 20 }), fc.string({ maxLength: 20 }))
      .map(([name, a, b]) => (body: Record<string, unknown>) => ({ ...body, [name]: `${a}\u0000${b}` })))
  }
  const maps = Object.entries(target.fields).filter(([, kind]) => kind === "object" || kind === "nullableObject" || kind === "bindings" || kind === "template").map(([name]) => name)
  if (maps.length > 0) {
    // A name JavaScript objects give a meaning to, as a map key (an own key, as JSON.parse makes it).
    mutations.push(fc.tuple(fc.constantFrom(...maps), fc.constantFrom("__proto__", "constructor", "prototype"), fc.jsonValue())
      .map(([name, key, value]) => (body: Record<string, unknown>) => {
        const map: Record<string, unknown> = {}
        Object.defineProperty(map, key, { value, enumerable: true, configurable: true, writable: true })
        return { ...body, [name]: map }
      }))
  }
  if (Object.values(target.fields).includes("secretValue")) {
    mutations.push(fc.integer({ min: 65_537, max: 300_000 }).map((length) => (body: Record<string, unknown>) => ({ ...body, value: "v".repeat(length) })))
  }
  if (Object.values(target.fields).includes("bindings")) {
    // A binding whose Secret id carries the wrong prefix.
    mutations.push(fc.tuple(fc.constantFrom(...WRONG_PREFIXES), UUID).map(([prefix, uuid]) => (body: Record<string, unknown>) => ({
      ...body,
      secretBindings: { SOME_KEY: { source: { kind: "secret", namespaceId: NamespaceId.make(), id: `${prefix}${uuid}` } } }
    })))
  }
  return fc.oneof(...mutations)
}

/** A body invalid by construction: one sure mutation, maybe followed by more. */
const invalidBody = (target: Target): fc.Arbitrary<string> =>
  fc.tuple(fc.array(invalidMutation(target), { minLength: 1, maxLength: 3 }), fc.boolean()).map(([mutations, broken]) => {
    let body: unknown = target.valid
    for (const mutate of mutations) body = mutate(typeof body === "object" && body !== null && !Array.isArray(body) ? body as Record<string, unknown> : {})
    const text = JSON.stringify(body)
    // Sometimes: the same body cut short, which is not JSON at all.
    return broken ? text.slice(0, Math.max(1, Math.floor(text.length / 2))) : text
  })

/** Anything JSON inside the right shape: any Unicode (unpaired surrogates included), any number. */
const shapedBody = (target: Target): fc.Arbitrary<string> => {
  // Any UTF-16 code unit, with the ones storage layers choke on (NUL, unpaired surrogates) made likely.
  const codeUnit = fc.oneof(
    fc.integer({ min: 0, max: 0xffff }).map((code) => String.fromCharCode(code)),
    fc.constantFrom("\u0000", "\ud800", "\udfff", "\u2028", "\u007f", "é", "a", "_", " ")
  )
  const anyText = fc.oneof(fc.string({ unit: codeUnit, maxLength: 40 }), fc.string({ maxLength: 40 }))
  const anyJson = fc.letrec<{ value: unknown }>((tie) => ({
    value: fc.oneof(
      { depthSize: "small" },
      anyText,
      fc.double(),
      fc.integer(),
      fc.boolean(),
      fc.constant(null),
      fc.array(tie("value"), { maxLength: 3 }),
      fc.dictionary(anyText, tie("value"), { maxKeys: 3 })
    )
  })).value
  const fieldValue = (kind: FieldKind): fc.Arbitrary<unknown> => {
    switch (kind) {
      case "name":
      case "secretValue":
        return anyText
      case "reference":
        return fc.oneof(anyText, fc.tuple(fc.constantFrom(...WRONG_PREFIXES, "cfg_"), UUID).map(([prefix, uuid]) => `${prefix}${uuid}`))
      case "enum":
        return fc.constantFrom("agent", "AGENT", "", "agent\u0000")
      case "object":
      case "nullableObject":
        return fc.dictionary(anyText, anyJson, { maxKeys: 4 })
      case "bindings":
        return fc.dictionary(anyText, fc.constant({ source: { kind: "secret", namespaceId: NamespaceId.make(), id: SecretId.make() } }), { maxKeys: 2 })
      case "template":
        return fc.record({
          variables: fc.dictionary(anyText, fc.record({ type: fc.constantFrom("string", "number", "boolean", "password", "text") }), { maxKeys: 2 }),
          configuration: fc.record({ values: fc.dictionary(anyText, anyJson, { maxKeys: 3 }) })
        }, { requiredKeys: [] })
    }
  }
  const fields = Object.fromEntries(Object.entries(target.fields).map(([name, kind]) => [name, fieldValue(kind)]))
  return fc.record(fields, { requiredKeys: [...target.required] }).map((body) =>
    // JSON.stringify writes Infinity and NaN as null; write them as a parser would read 1e999.
    JSON.stringify(body, (_key, value) => (typeof value === "number" && !Number.isFinite(value) ? 1e308 * 10 : value))
      .replace(/1e\+?309|Infinity/g, "1e999")
  )
}

const tableSnapshot = (query: (sql: SqlClient.SqlClient) => Effect.Effect<ReadonlyArray<{ row: string }>, unknown>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => Effect.map(query(sql), (rows) => rows.map((r) => r.row).join("\n")))

describe("bad input on every tenancy and Agent create and update route", () => {
  it.layer(apiTestLayer(withBundledPlugins), { timeout: 600_000 })((it) => {
    it.effect("invalid bodies get a 4xx envelope and write nothing; shaped bodies never get a 5xx", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdmin("fuzz-admin@example.com")
        const ns = yield* seedNamespace("fuzz")
        const secret = expectData(yield* send(baseUrl, "POST", `/namespaces/${ns}/secrets`, admin.headers, { name: "fuzz-secret", value: "v" }), 201)
        const configuration = expectData(yield* send(baseUrl, "POST", `/namespaces/${ns}/configurations`, admin.headers, { kind: "agent", values: {} }), 201)
        const audit = (sql: SqlClient.SqlClient) => sql<{ row: string }>`SELECT count(*)::text AS row FROM audit_events WHERE outcome = 'success'`
        const namespaces = tableSnapshot((sql) => Effect.zipWith(
          sql<{ row: string }>`SELECT row_to_json(n)::text AS row FROM namespaces n ORDER BY id`,
          Effect.zipWith(sql<{ row: string }>`SELECT count(*)::text AS row FROM work_items`, audit(sql), (a, b) => [...a, ...b]),
          (a, b) => [...a, ...b]
        ))
        const secrets = tableSnapshot((sql) => Effect.zipWith(
          sql<{ row: string }>`SELECT row_to_json(s)::text AS row FROM secrets s ORDER BY id`,
          audit(sql),
          (a, b) => [...a, ...b]
        ))
        const configurations = tableSnapshot((sql) => Effect.zipWith(
          sql<{ row: string }>`SELECT row_to_json(c)::text AS row FROM configurations c ORDER BY id`,
          Effect.zipWith(sql<{ row: string }>`SELECT row_to_json(r)::text AS row FROM configuration_secret_refs r ORDER BY configuration_id, secret_id`, audit(sql), (a, b) => [...a, ...b]),
          (a, b) => [...a, ...b]
        ))
        const preset = expectData(yield* send(baseUrl, "POST", `/namespaces/${ns}/presets`, admin.headers, { name: "fuzz-preset", template: {} }), 201)
        const presets = tableSnapshot((sql) => Effect.zipWith(
          sql<{ row: string }>`SELECT row_to_json(p)::text AS row FROM presets p ORDER BY id`,
          audit(sql),
          (a, b) => [...a, ...b]
        ))
        const provisioning = tableSnapshot((sql) => Effect.zipWith(
          sql<{ row: string }>`SELECT row_to_json(p)::text AS row FROM agent_provisioning p ORDER BY id`,
          Effect.zipWith(sql<{ row: string }>`SELECT count(*)::text AS row FROM work_items`, audit(sql), (a, b) => [...a, ...b]),
          (a, b) => [...a, ...b]
        ))
        const bindings = { KEY: { source: { kind: "secret", namespaceId: ns, id: secret.id } } }
        const agent = expectData(yield* send(baseUrl, "POST", `/namespaces/${ns}/agents`, admin.headers, { name: "fuzz-agent", configurationId: configuration.id }), 201)
        const agents = tableSnapshot((sql) => Effect.zipWith(
          sql<{ row: string }>`SELECT row_to_json(a)::text AS row FROM agents a ORDER BY id`,
          Effect.zipWith(sql<{ row: string }>`SELECT count(*)::text AS row FROM principals`, audit(sql), (a, b) => [...a, ...b]),
          (a, b) => [...a, ...b]
        ))
        const targets: ReadonlyArray<Target> = [
          {
            route: "POST /namespaces",
            method: "POST",
            path: "/namespaces",
            valid: { name: "fuzz-namespace" },
            fields: { name: "name", existingNamespace: "name" },
            required: ["name"],
            snapshot: namespaces
          },
          {
            route: "POST /namespaces/:namespaceId/secrets",
            method: "POST",
            path: `/namespaces/${ns}/secrets`,
            valid: { name: "fuzz-new", value: "v" },
            fields: { name: "name", value: "secretValue" },
            required: ["name", "value"],
            snapshot: secrets
          },
          {
            route: "PATCH /namespaces/:namespaceId/secrets/:secretId",
            method: "PATCH",
            path: `/namespaces/${ns}/secrets/${secret.id}`,
            valid: { value: "w" },
            fields: { value: "secretValue" },
            required: ["value"],
            snapshot: secrets
          },
          {
            route: "POST /namespaces/:namespaceId/configurations",
            method: "POST",
            path: `/namespaces/${ns}/configurations`,
            valid: { kind: "agent", values: { a: 1 }, secretBindings: bindings },
            fields: { kind: "enum", values: "object", secretBindings: "bindings" },
            required: ["kind", "values"],
            snapshot: configurations
          },
          {
            route: "PATCH /namespaces/:namespaceId/configurations/:configurationId",
            method: "PATCH",
            path: `/namespaces/${ns}/configurations/${configuration.id}`,
            valid: { values: { a: 2 }, secretBindings: bindings },
            fields: { values: "object", secretBindings: "bindings" },
            required: ["values"],
            snapshot: configurations
          },
          {
            route: "POST /namespaces/:namespaceId/presets",
            method: "POST",
            path: `/namespaces/${ns}/presets`,
            valid: { name: "fuzz-new-preset", template: { variables: { who: { type: "string" } }, configuration: { values: { greeting: "{{ vars.who }}" } } } },
            fields: { name: "name", template: "template" },
            required: ["name", "template"],
            snapshot: presets
          },
          {
            route: "PATCH /namespaces/:namespaceId/presets/:presetId",
            method: "PATCH",
            path: `/namespaces/${ns}/presets/${preset.id}`,
            valid: { name: "fuzz-renamed" },
            fields: { name: "name", template: "template" },
            required: [],
            snapshot: presets
          },
          {
            route: "POST /namespaces/:namespaceId/agents",
            method: "POST",
            path: `/namespaces/${ns}/agents`,
            valid: { name: "fuzz-new-agent", configurationId: configuration.id, harnessAuth: { method: "runtime" } },
            fields: { name: "name", configurationId: "reference", harnessAuth: "nullableObject", plugins: "object" },
            required: ["name", "configurationId"],
            snapshot: agents
          },
          {
            route: "PATCH /namespaces/:namespaceId/agents/:agentId",
            method: "PATCH",
            path: `/namespaces/${ns}/agents/${agent.id}`,
            valid: { configurationId: configuration.id, harnessAuth: null },
            fields: { configurationId: "reference", harnessAuth: "nullableObject", plugins: "object", pluginApprovers: "nullableObject" },
            required: ["configurationId"],
            snapshot: agents
          },
          {
            route: "POST /namespaces/:namespaceId/agents/provision",
            method: "POST",
            path: `/namespaces/${ns}/agents/provision`,
            valid: { requestId: RequestId.make(), name: "fuzz-agent", configuration: { kind: "agent", values: { a: 1 }, secretBindings: bindings } },
            fields: { requestId: "enum", name: "name", configuration: "object", executionMode: "enum" },
            required: ["requestId", "name"],
            snapshot: provisioning
          },
          // --- service accounts (issue 13) ---
          ...(yield* Effect.gen(function* () {
            const accounts = tableSnapshot((sql) => Effect.zipWith(
              sql<{ row: string }>`SELECT row_to_json(a)::text AS row FROM service_accounts a ORDER BY id`,
              audit(sql),
              (a, b) => [...a, ...b]
            ))
            const account = expectData(yield* send(baseUrl, "POST", `/namespaces/${ns}/service-accounts`, admin.headers, { name: "fuzz-account" }), 201)
            const targets: ReadonlyArray<Target> = [
              {
                route: "POST /namespaces/:namespaceId/service-accounts",
                method: "POST",
                path: `/namespaces/${ns}/service-accounts`,
                valid: { name: "fuzz-account" },
                fields: { name: "name" },
                required: ["name"],
                snapshot: accounts
              },
              {
                route: "PATCH /namespaces/:namespaceId/service-accounts/:serviceAccountId/credential",
                method: "PATCH",
                path: `/namespaces/${ns}/service-accounts/${account.id}/credential`,
                valid: { kind: "api_key", secretRef: { name: "fuzz-secret", key: "value" } },
                fields: { kind: "enum", secretRef: "object" },
                required: ["kind", "secretRef"],
                snapshot: accounts
              }
            ]
            return targets
          })),
          // --- end service accounts ---
          // credential-sources (SPEC 4.6): no gateway is selected here, and shaped bodies never
          // name a catalog type, so every answer is decided before a Secret or gateway is reached.
          {
            route: "POST /namespaces/:namespaceId/credential-sources",
            method: "POST",
            path: `/namespaces/${ns}/credential-sources`,
            valid: { name: "fuzz-source", type: "modelvendor", secrets: { api_key: { kind: "secret", namespaceId: ns, id: secret.id } } },
            fields: { name: "name", type: "enum", config: "object", secrets: "object" },
            required: ["name", "type"],
            snapshot: tableSnapshot((sql) => Effect.zipWith(
              sql<{ row: string }>`SELECT row_to_json(c)::text AS row FROM credential_sources c ORDER BY id`,
              Effect.zipWith(sql<{ row: string }>`SELECT row_to_json(r)::text AS row FROM credential_source_secret_refs r ORDER BY source_id`, audit(sql), (a, b) => [...a, ...b]),
              (a, b) => [...a, ...b]
            ))
          },
          // end credential-sources
          // plugins (issue 13): read-only routes; a refused body changes no Agent either.
          {
            route: "POST /namespaces/:namespaceId/agents/plugins",
            method: "POST",
            path: `/namespaces/${ns}/agents/plugins`,
            valid: { q: "search", cursor: "bundled:a" },
            fields: { q: "enum", cursor: "reference" },
            required: [],
            snapshot: agents
          },
          {
            route: "POST /namespaces/:namespaceId/agents/plugins/details",
            method: "POST",
            path: `/namespaces/${ns}/agents/plugins/details`,
            valid: { pluginId: "bundled:zalo" },
            fields: { pluginId: "reference" },
            required: ["pluginId"],
            snapshot: agents
          }
          // end plugins
        ]
        const runtime = yield* Effect.runtime<SqlClient.SqlClient>()
        const snapshot = (target: Target) => Runtime.runPromise(runtime)(target.snapshot)
        const request = (target: Target, body: string) =>
          call(`${baseUrl}${target.path}`, { method: target.method, headers: { ...admin.headers, "content-type": "application/json" }, body })
        const expectEnvelope = (result: Awaited<ReturnType<typeof call>>) => {
          expect(result.body, result.text.slice(0, 300)).toEqual({
            error: expect.objectContaining({ code: expect.any(String), message: expect.any(String) }),
            meta: { requestId: expect.stringMatching(REQUEST_ID) }
          })
        }

        for (const target of targets) {
          yield* Effect.promise(() =>
            fc.assert(
              fc.asyncProperty(invalidBody(target), async (body) => {
                const before = await snapshot(target)
                const result = await request(target, body)
                expect(result.status, `${target.route} ${body.slice(0, 200)} -> ${result.text.slice(0, 300)}`).toBeGreaterThanOrEqual(400)
                expect(result.status, `${target.route} ${body.slice(0, 200)}`).toBeLessThan(500)
                expectEnvelope(result)
                expect(await snapshot(target)).toBe(before)
              }),
              { seed: SEED, numRuns: RUNS }
            )
          )
          yield* Effect.promise(() =>
            fc.assert(
              fc.asyncProperty(shapedBody(target), async (body) => {
                const before = await snapshot(target)
                const result = await request(target, body)
                expect(result.status, `${target.route} ${body.slice(0, 200)} -> ${result.text.slice(0, 300)}`).toBeLessThan(500)
                if (result.status >= 400) {
                  expectEnvelope(result)
                  expect(await snapshot(target)).toBe(before)
                }
              }),
              { seed: SEED, numRuns: RUNS }
            )
          )
        }
      }), 300_000) // 12 routes x 60 runs x 2 properties: ~30 s alone, near a minute on a busy 2-core host
  })
})
