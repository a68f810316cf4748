/**
 * What the worker delivers to a dedicated revision's harness (`harnessSpec`), on a real database
 * with the builtin Secret Driver: a managed access token's sealed record, a native account's
 * `api_key` Secret, a direct token as revealed, credential_source's egress and placeholder; and
 * the permanent failures when there is nothing to deliver (no account, no credential, no egress)
 * or when the account's credential is no longer the one the revision froze (SPEC 2.6).
 */
import { describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { defaultInstallationConfig, type InstallationConfig, InstallationConfiguration } from "@svc/core/config"
import { builtinSecretDriverLayer, SecretDriver } from "@svc/core/drivers/secret"
import type { GatewaySnapshot } from "@svc/core/db"
import { type NamespaceId, SecretId, ServiceAccountId } from "@svc/core/schema"
import { Effect, Exit, Layer, Redacted } from "effect"
import { randomBytes } from "node:crypto"
import { migratedDatabaseLayer } from "../../../testing/database.js"
import { createNamespaceRow } from "../../../testing/identity.js"
import { sandboxInstallation } from "../../../testing/sandboxInstallation.js"
import { harnessSpec } from "../src/agents/harness.js"
import { WorkFailure } from "../src/engine/failure.js"

const secrets = builtinSecretDriverLayer({ current: Redacted.make(new Uint8Array(randomBytes(32))) })
const snapshot = (auth: Record<string, string>): GatewaySnapshot => ({ configuration: {}, secretBindings: {}, harness: { auth: { method: auth.method!, ...auth } } })

const withEgress = (egress?: string): InstallationConfig =>
  sandboxInstallation({
    endpoint: "http://127.0.0.1:1", auth: { mode: "unauthenticated" }, insecureTransport: "network-policy",
    ...(egress === undefined ? {} : { egress })
  })

/** A ready account with `kind`'s credential sealed as the API stores it. */
const account = (ns: NamespaceId, kind: "access_token" | "api_key" | "none") =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const driver = yield* SecretDriver
    const id = ServiceAccountId.make()
    let secretId: string | null = null
    if (kind === "api_key") {
      const sealed = yield* driver.seal(Redacted.make("native-key-77"))
      secretId = SecretId.make()
      yield* sql`INSERT INTO secrets (id, namespace_id, name, driver, key_id, nonce, ciphertext, tag)
        VALUES (${secretId}, ${ns}, ${`native-${id}`}, ${driver.name}, ${sealed.keyId}, ${sealed.nonce}, ${sealed.ciphertext}, ${sealed.tag})`
    }
    yield* sql`INSERT INTO service_accounts (id, namespace_id, name, state, credential_kind, credential_secret_id, credential_secret_key, credential_upstream_id)
      VALUES (${id}, ${ns}, ${`sa-${kind}`}, 'ready', ${kind === "none" ? null : kind}, ${secretId}, ${secretId === null ? null : "value"},
        ${kind === "access_token" ? "cred-1" : null})`
    if (kind === "access_token") {
      const sealed = yield* driver.seal(Redacted.make(JSON.stringify({ token: "access-token-42", "workspace-id": "ws-9" })))
      yield* sql`INSERT INTO service_account_credentials (service_account_id, driver, key_id, nonce, ciphertext, tag)
        VALUES (${id}, ${driver.name}, ${sealed.keyId}, ${sealed.nonce}, ${sealed.ciphertext}, ${sealed.tag})`
    }
    return id
  })

const revealed = (env: Readonly<Record<string, Redacted.Redacted<string>>> | undefined) =>
  Object.fromEntries(Object.entries(env ?? {}).map(([name, value]) => [name, Redacted.value(value)]))

/** The account's credential kind and Secret reference as its row holds them now. */
const currentCredential = (id: ServiceAccountId) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* sql<{ kind: "access_token" | "api_key"; secretId: string | null; key: string | null }>`
      SELECT credential_kind AS kind, credential_secret_id AS "secretId", credential_secret_key AS key FROM service_accounts WHERE id = ${id}`
    return row!.secretId === null ? { kind: row!.kind } : { kind: row!.kind, secretRef: { id: row!.secretId, key: row!.key! } }
  })

const frozen = (serviceAccountId: string, credential: GatewaySnapshot["harness"]["credential"]): GatewaySnapshot => ({
  configuration: {},
  secretBindings: {},
  harness: { auth: { method: "provider_service_account", serviceAccountId }, credential }
})

const changed = new WorkFailure({
  code: "RESOURCE_CONFLICT",
  message: "The service account's credential is not the one the revision froze; deploy the Agent again.",
  permanent: true
})

const noCredential = new WorkFailure({ code: "SECRET_UNAVAILABLE", message: "A credential the revision delivers could not be read.", permanent: true })

describe("the harness a revision delivers", () => {
  it.layer(Layer.mergeAll(migratedDatabaseLayer, secrets), { timeout: 120_000 })((it) => {
    it.effect("provider_service_account: the access token and workspace, or a native account's api_key Secret", () =>
      Effect.gen(function* () {
        const ns = yield* createNamespaceRow("harness-sa")
        const managed = yield* harnessSpec(ns, snapshot({ method: "provider_service_account", serviceAccountId: yield* account(ns, "access_token") }), {})
        expect(managed?.method).toBe("provider_service_account")
        expect(revealed(managed?.env)).toEqual({ SVC_HARNESS_TOKEN: "access-token-42", SVC_HARNESS_WORKSPACE_ID: "ws-9" })
        const native = yield* harnessSpec(ns, snapshot({ method: "provider_service_account", serviceAccountId: yield* account(ns, "api_key") }), {})
        expect(revealed(native?.env)).toEqual({ SVC_HARNESS_TOKEN: "native-key-77" })
      }))

    it.effect("provider_service_account without a credential, or of another Namespace, fails SECRET_UNAVAILABLE permanently", () =>
      Effect.gen(function* () {
        const ns = yield* createNamespaceRow("harness-sa-none")
        const other = yield* createNamespaceRow("harness-sa-other")
        const bare = yield* account(ns, "none")
        const foreign = yield* account(other, "access_token")
        for (const serviceAccountId of [bare, foreign, "sa_not-an-id"]) {
          const exit = yield* Effect.exit(harnessSpec(ns, snapshot({ method: "provider_service_account", serviceAccountId }), {}))
          expect(exit).toEqual(Exit.fail(noCredential))
        }
      }))

    it.effect("provider_service_account: the frozen credential kind and Secret reference must still be the account's", () =>
      Effect.gen(function* () {
        const ns = yield* createNamespaceRow("harness-sa-frozen")
        const sql = yield* SqlClient.SqlClient
        const managed = yield* account(ns, "access_token")
        const native = yield* account(ns, "api_key")
        const nativeCredential = yield* currentCredential(native)
        expect(yield* currentCredential(managed)).toEqual({ kind: "access_token" })
        expect(revealed((yield* harnessSpec(ns, frozen(managed, { kind: "access_token" }), {}))?.env)).toEqual({
          SVC_HARNESS_TOKEN: "access-token-42",
          SVC_HARNESS_WORKSPACE_ID: "ws-9"
        })
        expect(revealed((yield* harnessSpec(ns, frozen(native, nativeCredential), {}))?.env)).toEqual({ SVC_HARNESS_TOKEN: "native-key-77" })

        // Another kind, another Secret or key, or a reference where none was frozen: refused, nothing revealed.
        const other = yield* account(ns, "api_key")
        const otherSecret = (yield* currentCredential(other)).secretRef!
        const mismatches = [
          [managed, { kind: "api_key", secretRef: nativeCredential.secretRef! }],
          [native, { kind: "access_token" }],
          [native, { kind: "api_key" }],
          [native, { kind: "api_key", secretRef: otherSecret }],
          [native, { kind: "api_key", secretRef: { ...nativeCredential.secretRef!, key: "token" } }]
        ] as const
        for (const [id, credential] of mismatches) {
          expect(yield* Effect.exit(harnessSpec(ns, frozen(id, credential), {}))).toEqual(Exit.fail(changed))
        }
        // The native account's reference is replaced after the revision froze it.
        yield* sql`UPDATE service_accounts SET credential_secret_id = ${otherSecret.id} WHERE id = ${native}`
        expect(yield* Effect.exit(harnessSpec(ns, frozen(native, nativeCredential), {}))).toEqual(Exit.fail(changed))
        // A frozen credential that does not decode is refused the same way.
        const malformed = { ...frozen(native, nativeCredential), harness: { auth: { method: "provider_service_account", serviceAccountId: native }, credential: { kind: "password" } } }
        expect(yield* Effect.exit(harnessSpec(ns, malformed, {}))).toEqual(Exit.fail(changed))
      }))

    it.effect("direct_token takes the revealed Secret; api_key and no binding have no harness", () =>
      Effect.gen(function* () {
        const ns = yield* createNamespaceRow("harness-dt")
        const spec = yield* harnessSpec(ns, snapshot({ method: "direct_token" }), { SVC_HARNESS_TOKEN: Redacted.make("dt") })
        expect(spec?.method).toBe("direct_token")
        expect(revealed(spec?.env)).toEqual({ SVC_HARNESS_TOKEN: "dt" })
        expect(yield* harnessSpec(ns, snapshot({ method: "api_key" }), {})).toBeUndefined()
        expect(yield* harnessSpec(ns, { configuration: {}, secretBindings: {}, harness: {} }, {})).toBeUndefined()
      }))

    it.effect("credential_source: no credential, the egress and the source's placeholder; without an egress NOT_IMPLEMENTED", () =>
      Effect.gen(function* () {
        const ns = yield* createNamespaceRow("harness-cs")
        const bound = snapshot({ method: "credential_source", sourceId: "cs_1" })
        const spec = yield* harnessSpec(ns, bound, {}).pipe(Effect.provideService(InstallationConfiguration, withEgress("http://egress.sandbox:3128")))
        expect(spec).toEqual({ method: "credential_source", env: {}, egress: { url: "http://egress.sandbox:3128", placeholder: "svc-credential-source:cs_1" } })
        for (const installation of [withEgress(), defaultInstallationConfig]) {
          const exit = yield* Effect.exit(harnessSpec(ns, bound, {}).pipe(Effect.provideService(InstallationConfiguration, installation)))
          expect(exit).toEqual(Exit.fail(new WorkFailure({
            code: "NOT_IMPLEMENTED",
            message: "No Credential Gateway egress is configured for credential_source delivery.",
            permanent: true
          })))
        }
      }))
  })
})
