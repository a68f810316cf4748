/**
 * What the worker delivers to a dedicated revision's harness (`harnessSpec`), on a real database
 * with the builtin Secret Driver: a managed access token's sealed record, a native account's
 * `api_key` Secret, a direct token as revealed, credential_source's egress and placeholder; and
 * the permanent failures when there is nothing to deliver (no account, no credential, no egress).
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
        VALUES (${secretId}, ${ns}, 'native', ${driver.name}, ${sealed.keyId}, ${sealed.nonce}, ${sealed.ciphertext}, ${sealed.tag})`
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
