/**
 * Cross-tenant isolation of repository credentials (SPEC 1.2, 2.14, 4.4): the registry approves
 * `widgets` for A (read/write) and B (read) and `gadgets` for A only. Principals of Namespace B
 * (a human Namespace administrator, a Namespace-scoped key, an Installation key bound only in B)
 * cannot list A's options, do not see A's repositories or descriptions in B's options, and cannot
 * bind a repository approved only for A: the refusal is the same as for a reference that exists
 * nowhere, so it confirms nothing. Nothing is written.
 */
import { describe, expect, layer } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { makeCodehostRepoDriver, RepoDriver } from "@svc/core/drivers/repo"
import { BuiltinRoles } from "@svc/core/iam"
import { NamespaceId, RequestId } from "@svc/core/schema"
import { Effect, Layer } from "effect"
import { NS_A, NS_B, sampleRegistry } from "../../../testing/credentialService.js"
import { bindRole, createServicePrincipal, insertServiceKey } from "../../../testing/identity.js"
import { TestServer } from "../../../testing/server.js"
import { apiTestLayer, expectData, expectError, type Headers, seedAdmin, seedHuman, send, withKey } from "./support/iamServer.js"

const registry = sampleRegistry({
  repositories: [
    ...sampleRegistry().repositories,
    { repositoryRef: "gadgets", repositoryId: "1002", repository: "acme/gadgets", namespaces: [{ namespaceId: NS_A, profiles: ["git-read", "git-write"] }] }
  ]
})
// No credential service runs: any description fetch would answer 503, so a 200 proves none was tried.
const driver = makeCodehostRepoDriver({ id: "codehost", controlSocket: "/nonexistent/control.sock", sessionDurationSeconds: 900 }, registry)

describe("cross-tenant repository credentials", () => {
  layer(apiTestLayer().pipe(Layer.provide(Layer.succeed(RepoDriver, driver))), { timeout: 180_000, excludeTestServices: true })((it) => {
    it.effect("Namespace B neither lists A's repository options nor binds a repository approved only for A", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const sql = yield* SqlClient.SqlClient
        for (const [id, name] of [[NS_A, "tenant-a"], [NS_B, "tenant-b"]] as const) {
          yield* sql`INSERT INTO namespaces (id, name, status) VALUES (${id}, ${name}, 'ready')`
        }
        const admin = yield* seedAdmin("repos-tenant-admin@example.com")
        const configuration = expectData(
          yield* send(baseUrl, "POST", `/namespaces/${NS_B}/configurations`, admin.headers, { kind: "agent", values: {} }),
          201
        )

        const human = yield* seedHuman("repos-tenant-b@example.com")
        yield* bindRole(human.principalId, BuiltinRoles.namespaceAdmin.id, { kind: "namespace", id: NS_B })
        const scoped = yield* createServicePrincipal("b-repos-automation", NS_B)
        yield* bindRole(scoped, BuiltinRoles.namespaceAdmin.id, { kind: "namespace", id: NS_B })
        const wide = yield* createServicePrincipal("b-repos-installation")
        yield* bindRole(wide, BuiltinRoles.namespaceAdmin.id, { kind: "namespace", id: NS_B })
        const callers: Record<string, Headers> = {
          human: human.headers,
          namespaceKey: withKey((yield* insertServiceKey(scoped, { namespaceId: NS_B })).key),
          installationKey: withKey((yield* insertServiceKey(wide)).key)
        }
        const agentsOf = (ns: string) => sql<{ n: number }>`SELECT count(*)::int AS n FROM agents WHERE namespace_id = ${ns}`
        const before = { a: (yield* agentsOf(NS_A))[0]!.n, b: (yield* agentsOf(NS_B))[0]!.n }

        for (const [caller, headers] of Object.entries(callers)) {
          const options = (ns: string, query = "") => send(baseUrl, "GET", `/namespaces/${ns}/agents/repository-options${query}`, headers)
          // A's options: refused exactly as a Namespace that does not exist.
          const real = yield* options(NS_A, "?descriptionRefs=gadgets")
          const ghost = yield* options(NamespaceId.make(), "?descriptionRefs=gadgets")
          expect([403, 404], `${caller}: ${real.text}`).toContain(real.status)
          expect({ status: ghost.status, code: ghost.body.error.code }).toEqual({ status: real.status, code: real.body.error.code })
          if (caller === "namespaceKey") expect(real.status).toBe(403)

          // B's options: only what B may bind, with B's profiles; A's repository is not described.
          const own = yield* options(NS_B, "?descriptionRefs=gadgets")
          expect(expectData(own, 200)).toEqual([{ repositoryRef: "widgets", displayName: "acme/widgets", allowedProfiles: ["git-read"] }])
          expect(own.body.meta.descriptionsPending).toBe(false)
          expect(own.text).not.toContain("gadgets")

          // Binding A's repository from B: 404, as for a reference that exists nowhere.
          const create = (name: string, fields: Record<string, unknown>) =>
            send(baseUrl, "POST", `/namespaces/${NS_B}/agents`, headers, { name, configurationId: configuration.id, ...fields })
          for (const ref of ["gadgets", "nowhere"]) {
            expectError(yield* create(`${caller}-${ref}`, { repositoryBindings: [{ repositoryRef: ref, profile: "git-read" }] }), 404, "NOT_FOUND")
            expectError(yield* create(`${caller}-${ref}-access`, {
              repositoryAccess: { defaultProfile: "git-read", repositories: [{ repositoryRef: ref }] }
            }), 404, "NOT_FOUND")
            const provision = yield* send(baseUrl, "POST", `/namespaces/${NS_B}/agents/provision`, headers, {
              requestId: RequestId.make(),
              name: `${caller}-${ref}-provisioned`,
              configuration: { kind: "agent", values: {} },
              repositoryBindings: [{ repositoryRef: ref, profile: "git-read" }]
            })
            expectError(provision, 404, "NOT_FOUND")
          }
          // A's profile on the shared repository is not B's.
          expectError(yield* create(`${caller}-write`, { repositoryBindings: [{ repositoryRef: "widgets" }] }), 409, "RESOURCE_CONFLICT")
        }

        // An Agent of B with B's grant cannot be moved onto A's repository.
        const agent = expectData(yield* send(baseUrl, "POST", `/namespaces/${NS_B}/agents`, admin.headers, {
          name: "b-reader",
          configurationId: configuration.id,
          repositoryBindings: [{ repositoryRef: "widgets", profile: "git-read" }]
        }), 201)
        for (const headers of Object.values(callers)) {
          const patch = yield* send(baseUrl, "PATCH", `/namespaces/${NS_B}/agents/${agent.id}`, headers, {
            configurationId: configuration.id,
            repositoryBindings: [{ repositoryRef: "gadgets", profile: "git-read" }]
          })
          expectError(patch, 404, "NOT_FOUND")
        }
        expect(expectData(yield* send(baseUrl, "GET", `/namespaces/${NS_B}/agents/${agent.id}`, admin.headers), 200).repositoryBindings).toEqual([
          { repositoryRef: "widgets", profile: "git-read" }
        ])
        expect({ a: (yield* agentsOf(NS_A))[0]!.n, b: (yield* agentsOf(NS_B))[0]!.n }).toEqual({ a: before.a, b: before.b + 1 })
        const provisioned = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM agent_provisioning WHERE namespace_id = ${NS_B}`
        expect(provisioned[0]!.n).toBe(0)
      }))
  })
})
