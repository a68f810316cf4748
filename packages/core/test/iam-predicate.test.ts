/**
 * `visibleTo` (the list filter), `decide` (one decision) and `allowedSqlOf` (the decision inside
 * the credential statement) share one grant predicate (`iam/grantPredicate.ts`); this property
 * checks they agree row for row against the real PostgreSQL, over random bindings and
 * Restrictions at every scope. fast-check from a fixed seed and a bounded number of runs, so the
 * test is repeatable.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { allowedSqlOf, decide, type Permission, type ResourceRef, visibleTo } from "@svc/core/iam"
import { Effect, Runtime } from "effect"
import fc from "fast-check"
import { migratedDatabaseLayer } from "../../../testing/database.js"

const SEED = 20261123
const RUNS = 150

const N1 = "ns_00000000-0000-4000-8000-0000000000a1"
const N2 = "ns_00000000-0000-4000-8000-0000000000a2"
const PRINCIPALS = ["prn_prop-1", "prn_prop-2"] as const

/** The rows a list could show, by kind; an exact-resource binding or Restriction names one of them. */
const candidates = {
  secret: [["sec-1", N1], ["sec-2", N1], ["sec-3", N2]],
  agent: [["agt-1", N1], ["agt-2", N2]],
  namespace: [[N1, N1], [N2, N2]]
} as const
type Kind = keyof typeof candidates
const readOf: Record<Kind, Permission> = { secret: "secret:read", agent: "agent:read", namespace: "namespace:read" }

const ROLES = {
  "role_prop-secrets": ["secret:read"],
  "role_prop-agents": ["agent:read", "namespace:read"],
  "role_prop-all": ["secret:read", "agent:read", "namespace:read"],
  "role_prop-none": ["preset:read"]
} as const

interface Scope {
  readonly kind: string
  readonly id: string
  readonly namespaceId: string | null
}

const refOf = (kind: Kind, [id, ns]: readonly [string, string]): ResourceRef =>
  kind === "namespace" ? { kind, id } : { kind, id, namespaceId: ns }

const scopeArb: fc.Arbitrary<Scope> = fc.oneof(
  fc.constant({ kind: "installation", id: "installation", namespaceId: null }),
  fc.constantFrom(N1, N2).map((id) => ({ kind: "namespace", id, namespaceId: id })),
  fc.constantFrom(...(Object.keys(candidates) as Array<Kind>)).chain((kind) =>
    fc.constantFrom(...candidates[kind]).map(([id, ns]) => ({ kind, id, namespaceId: ns })))
)

const policyArb = fc.record({
  bindings: fc.array(
    fc.record({
      principal: fc.constantFrom(...PRINCIPALS),
      role: fc.constantFrom(...(Object.keys(ROLES) as Array<keyof typeof ROLES>)),
      scope: scopeArb
    }),
    { minLength: 1, maxLength: 6 }
  ),
  restrictions: fc.array(
    fc.record({
      principal: fc.constantFrom(...PRINCIPALS),
      permission: fc.constantFrom("secret:read", "agent:read", "namespace:read", "*"),
      scope: scopeArb
    }),
    { maxLength: 3 }
  ),
  caller: fc.record({ principalId: fc.constantFrom(...PRINCIPALS), namespaceId: fc.constantFrom(null, N1, N2) }),
  kind: fc.constantFrom(...(Object.keys(candidates) as Array<Kind>))
})
type Policy = typeof policyArb extends fc.Arbitrary<infer P> ? P : never

const seed = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  for (const ns of [N1, N2]) yield* sql`INSERT INTO namespaces (id, name, status) VALUES (${ns}, ${ns}, 'ready')`
  for (const id of PRINCIPALS) yield* sql`INSERT INTO principals (id, kind, name) VALUES (${id}, 'service', ${id})`
  for (const [id, permissions] of Object.entries(ROLES)) {
    yield* sql`INSERT INTO roles (id, name, permissions) VALUES (${id}, ${id}, ${[...permissions]})`
  }
})

/** What each side answers for one policy: the ids `visibleTo` selects and the ids `decide` allows. */
const bothAnswers = (policy: Policy) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`DELETE FROM access_bindings WHERE principal_id IN ${sql.in([...PRINCIPALS])}`
    yield* sql`DELETE FROM restrictions WHERE principal_id IN ${sql.in([...PRINCIPALS])}`
    for (const [i, b] of policy.bindings.entries()) {
      yield* sql`
        INSERT INTO access_bindings (id, principal_id, role_id, resource_kind, resource_id, namespace_id)
        VALUES (${`bnd_prop-${i}`}, ${b.principal}, ${b.role}, ${b.scope.kind}, ${b.scope.id}, ${b.scope.namespaceId})
      `
    }
    for (const [i, x] of policy.restrictions.entries()) {
      yield* sql`
        INSERT INTO restrictions (id, principal_id, permission, resource_kind, resource_id)
        VALUES (${`rst_prop-${i}`}, ${x.principal}, ${x.permission}, ${x.scope.kind}, ${x.scope.id})
      `
    }
    const rows = candidates[policy.kind]
    // The listed rows are aliased `b` and `r` on purpose: the predicate's own subqueries must not
    // capture the caller's columns.
    const values = sql.unsafe(rows.map(([id, ns]) => `('${id}', '${ns}')`).join(", "))
    const permission = readOf[policy.kind]
    const listed = yield* sql<{ id: string }>`
      SELECT b.id FROM (VALUES ${values}) AS b (id, namespace_id) CROSS JOIN (SELECT 1) AS r
      WHERE ${visibleTo(sql, policy.caller, permission, policy.kind, { id: "b.id", namespaceId: "b.namespace_id" })}
      ORDER BY b.id
    `
    const allowed: Array<string> = []
    const folded: Array<string> = []
    // `allowedSqlOf` (the credential statement's decision) over the principal as SQL values.
    const principal = { id: sql`${policy.caller.principalId}`, namespaceId: sql`${policy.caller.namespaceId}::text` }
    for (const row of rows) {
      const decision = yield* decide(policy.caller, permission, refOf(policy.kind, row))
      if (decision._tag === "Allowed") allowed.push(row[0])
      const [answer] = yield* sql<{ allowed: boolean }>`SELECT ${allowedSqlOf(sql, principal, permission, refOf(policy.kind, row))} AS allowed`
      if (answer!.allowed) folded.push(row[0])
    }
    return { listed: listed.map((row) => row.id), allowed: allowed.sort(), folded: folded.sort() }
  })

describe("one grant predicate: visibleTo selects exactly the rows decide allows, and allowedSqlOf answers as decide", () => {
  it.layer(migratedDatabaseLayer, { timeout: 120_000 })((it) => {
    it.effect("over random bindings and Restrictions at Installation, Namespace and exact-resource scope", () =>
      Effect.gen(function* () {
        yield* seed
        const runtime = yield* Effect.runtime<SqlClient.SqlClient>()
        let sawAllowed = 0
        let sawDenied = 0
        yield* Effect.promise(() =>
          fc.assert(
            fc.asyncProperty(policyArb, async (policy) => {
              const { listed, allowed, folded } = await Runtime.runPromise(runtime)(bothAnswers(policy))
              expect(listed, JSON.stringify(policy)).toEqual(allowed)
              expect(folded, JSON.stringify(policy)).toEqual(allowed)
              sawAllowed += allowed.length
              sawDenied += candidates[policy.kind].length - allowed.length
            }),
            { seed: SEED, numRuns: RUNS }
          )
        )
        // The generator reaches both answers often, so agreement is not agreement on "nothing".
        expect(sawAllowed).toBeGreaterThan(RUNS / 2)
        expect(sawDenied).toBeGreaterThan(RUNS / 2)
      }))
  })
})
