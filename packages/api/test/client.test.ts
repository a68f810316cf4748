/**
 * The typed client (`@svc/core/client`) against the real server: success envelopes arrive as
 * domain values, error envelopes as the tagged errors of `@svc/core/errors`, and both ways of
 * authenticating (a session cookie kept from sign-in, a service key) work through it.
 */
import { describe, expect, it } from "@effect/vitest"
import { Credentials, make } from "@svc/core/client"
import { InvalidRequest, NotFound, Unauthenticated } from "@svc/core/errors"
import { NamespaceId } from "@svc/core/schema"
import { FetchHttpClient } from "@effect/platform"
import { Effect } from "effect"
import { bindInstallationAdmin, createServicePrincipal, insertServiceKey } from "../../../testing/identity.js"
import { TestServer } from "../../../testing/server.js"
import { clientServerLayer, DEV_ADMIN } from "./support/clientServer.js"

const clientFor = (credentials: Credentials) =>
  Effect.flatMap(TestServer, ({ baseUrl }) => make({ baseUrl, credentials })).pipe(Effect.provide(FetchHttpClient.layer))

const signedIn = Effect.gen(function* () {
  const client = yield* clientFor(Credentials.cookieJar())
  const result = yield* client.authSessions.signInEmail({ payload: DEV_ADMIN })
  expect(result).toEqual({ authenticated: true })
  return client
})

describe("@svc/core/client", () => {
  it.layer(clientServerLayer, { timeout: 120_000 })((it) => {
    it.effect("signs in as the development administrator, keeps the cookie, lists and creates Namespaces", () =>
      Effect.gen(function* () {
        const client = yield* signedIn
        const session = yield* client.authSessions.session()
        expect(session).toMatchObject({ authenticated: true, email: DEV_ADMIN.email })

        const before = yield* client.namespaces.list({ urlParams: {} })
        expect(before.map((namespace) => namespace.name)).toEqual(["default"])

        // A cookie-authenticated mutation: the jar's cookie and the trusted Origin.
        const created = yield* client.namespaces.create({ payload: { name: "from-the-client" } })
        expect(created).toMatchObject({ name: "from-the-client", status: "provisioning" })
        expect(created.id).toMatch(/^ns_/)
        const read = yield* client.namespaces.get({ path: { namespaceId: created.id } })
        expect(read.id).toBe(created.id)

        const after = yield* client.namespaces.list({ urlParams: {} })
        expect(after.map((namespace) => namespace.name).sort()).toEqual(["default", "from-the-client"])
      }))

    it.effect("a 404 is the NotFound class, with the service's message", () =>
      Effect.gen(function* () {
        const client = yield* signedIn
        const error = yield* Effect.flip(client.namespaces.get({ path: { namespaceId: NamespaceId.make() } }))
        expect(error).toBeInstanceOf(NotFound)
        expect(error._tag).toBe("NotFound")
        expect(error.message.length).toBeGreaterThan(0)
      }))

    it.effect("a 401 is the Unauthenticated class: no credential, and a wrong password", () =>
      Effect.gen(function* () {
        const anonymous = yield* clientFor(Credentials.none)
        const listed = yield* Effect.flip(anonymous.namespaces.list({ urlParams: {} }))
        expect(listed).toBeInstanceOf(Unauthenticated)
        const signIn = yield* Effect.flip(
          anonymous.authSessions.signInEmail({ payload: { email: DEV_ADMIN.email, password: "not the password at all" } })
        )
        expect(signIn).toBeInstanceOf(Unauthenticated)
      }))

    it.effect("a 400 is InvalidRequest with its details", () =>
      Effect.gen(function* () {
        const client = yield* signedIn
        // The client encodes requests with the contract's schemas, so a 400 from this client
        // comes from a rule only the server can check: the principal must exist (SPEC 5.5.2).
        const error = yield* Effect.flip(
          client.serviceKeys.issue({ payload: { servicePrincipalId: "sp_missing", name: "nobody" } })
        )
        expect(error).toBeInstanceOf(InvalidRequest)
        expect(error).toMatchObject({ details: [{ code: "INVALID_VALUE", path: "/servicePrincipalId" }] })
      }))

    it.effect("a service key is sent as x-api-key", () =>
      Effect.gen(function* () {
        const principalId = yield* createServicePrincipal("client-test")
        yield* bindInstallationAdmin(principalId)
        const { key } = yield* insertServiceKey(principalId)
        const client = yield* clientFor(Credentials.serviceKey(key))
        const listed = yield* client.namespaces.list({ urlParams: {} })
        expect(listed.map((namespace) => namespace.name)).toContain("default")
        // A key never yields a session (SPEC 5.5.4).
        expect(yield* Effect.flip(client.authSessions.session())).toBeInstanceOf(Unauthenticated)
      }))
  })
})
