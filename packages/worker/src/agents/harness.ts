/**
 * Dedicated execution's harness (SPEC 2.5, 4.5, 4.6; docs/decisions/kubernetes.md "Dedicated
 * execution"): the credentials a revision delivers to its harness container only, never to its
 * gateway. `direct_token`: the bound Secret's value (revealed with the revision's other Secrets,
 * `deliveredSecrets`). `provider_service_account`: the account's credential, revealed here just
 * before the start: a managed access token's sealed record (`token` and `workspace-id`) or a
 * native account's `api_key` Secret. The revision froze the credential's kind and Secret
 * reference at deploy (SPEC 2.6): the start is refused, permanently, when the account's credential
 * is no longer that one (docs/decisions/service-accounts.md "Frozen credential"); a revision made
 * before the freeze has none and takes the account's current credential. `credential_source`: no
 * credential at all; the harness sends the source's placeholder through the Credential Gateway's
 * egress.
 */
import { type HarnessSpec, credentialSourcePlaceholder, HarnessVariables } from "@svc/core/drivers/compute"
import { SecretDriver } from "@svc/core/drivers/secret"
import { FrozenCredential, SecretsRepo, ServiceAccountsRepo } from "@svc/core/db"
import { InstallationConfiguration } from "@svc/core/config"
import { NamespaceId, ServiceAccountId } from "@svc/core/schema"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Layer, Option, Redacted, Schema } from "effect"
import { WorkFailure } from "../engine/failure.js"
import type { GatewaySnapshot } from "@svc/core/db"

const Repos = Layer.mergeAll(ServiceAccountsRepo.Default, SecretsRepo.Default)

const unavailable = (permanent: boolean) =>
  new WorkFailure({ code: "SECRET_UNAVAILABLE", message: "A credential the revision delivers could not be read.", permanent })

const changed = () =>
  new WorkFailure({
    code: "RESOURCE_CONFLICT",
    message: "The service account's credential is not the one the revision froze; deploy the Agent again.",
    permanent: true
  })

/** The account's credential as the row holds it now, against what the revision froze. */
const sameCredential = (
  frozen: FrozenCredential,
  row: { readonly credential_kind: string | null; readonly credential_secret_id: string | null; readonly credential_secret_key: string | null }
) =>
  row.credential_kind === frozen.kind &&
  row.credential_secret_id === (frozen.secretRef?.id ?? null) &&
  row.credential_secret_key === (frozen.secretRef?.key ?? null)

const AccessToken = Schema.parseJson(Schema.Struct({ token: Schema.NonEmptyString, "workspace-id": Schema.String }))

/**
 * The account's credential as the harness's variables; a missing one fails permanently, and so
 * does one that is not the credential the revision froze (`frozen`, absent on older revisions).
 */
const serviceAccountEnvironment = (namespaceId: NamespaceId, serviceAccountId: string, frozen: unknown) =>
  Effect.gen(function* (): Effect.fn.Return<Record<string, Redacted.Redacted<string>>, WorkFailure | SqlError, ServiceAccountsRepo | SecretsRepo | SecretDriver> {
    const accounts = yield* ServiceAccountsRepo
    const secrets = yield* SecretDriver
    const id = yield* Schema.decodeUnknown(ServiceAccountId)(serviceAccountId).pipe(Effect.mapError(() => unavailable(true)))
    const expected = frozen === undefined
      ? undefined
      : yield* Schema.decodeUnknown(FrozenCredential)(frozen).pipe(Effect.mapError(changed))
    const row = Option.getOrUndefined(yield* accounts.sealedCredential({ id, namespace_id: namespaceId }))
    if (row !== undefined && expected !== undefined && !sameCredential(expected, row)) {
      yield* Effect.logWarning("a service account's credential is not the one the revision froze", { serviceAccountId })
      return yield* changed()
    }
    const reveal = (sealed: { readonly key_id: string; readonly nonce: Uint8Array; readonly ciphertext: Uint8Array; readonly tag: Uint8Array }) =>
      secrets.reveal({ keyId: sealed.key_id, nonce: sealed.nonce, ciphertext: sealed.ciphertext, tag: sealed.tag }).pipe(
        Effect.tapError((error) => Effect.logWarning("a service account's credential could not be revealed", { serviceAccountId, reason: error._tag })),
        Effect.mapError(() => unavailable(true))
      )
    if (row?.credential_kind === "access_token" && row.key_id !== null && row.nonce !== null && row.ciphertext !== null && row.tag !== null) {
      const record = yield* reveal({ key_id: row.key_id, nonce: row.nonce, ciphertext: row.ciphertext, tag: row.tag })
      const parsed = yield* Schema.decodeUnknown(AccessToken)(Redacted.value(record)).pipe(Effect.mapError(() => unavailable(true)))
      return {
        [HarnessVariables.token]: Redacted.make(parsed.token),
        [HarnessVariables.workspaceId]: Redacted.make(parsed["workspace-id"])
      }
    }
    if (row?.credential_kind === "api_key" && row.credential_secret_id !== null) {
      const stored = yield* SecretsRepo
      const [secret] = yield* stored.sealed({ namespace_id: namespaceId, ids: [row.credential_secret_id] })
      if (secret === undefined) return yield* unavailable(true)
      return { [HarnessVariables.token]: yield* reveal(secret) }
    }
    yield* Effect.logWarning("a service account has no credential to deliver", { serviceAccountId })
    return yield* unavailable(true)
  })

/**
 * The revision's harness, or `undefined` when it has none. `revealed` holds the Secrets
 * `deliveredSecrets` sends to the harness (a `direct_token`).
 */
export const harnessSpec = (
  namespaceId: NamespaceId,
  snapshot: GatewaySnapshot,
  revealed: Readonly<Record<string, Redacted.Redacted<string>>>
) =>
  Effect.gen(function* () {
    const auth = snapshot.harness.auth
    if (auth?.method === "direct_token") return { method: "direct_token", env: revealed } satisfies HarnessSpec
    if (auth?.method === "provider_service_account" && auth.serviceAccountId !== undefined) {
      const env = yield* serviceAccountEnvironment(namespaceId, auth.serviceAccountId, snapshot.harness.credential)
      return { method: "provider_service_account", env } satisfies HarnessSpec
    }
    if (auth?.method === "credential_source" && auth.sourceId !== undefined) {
      const installation = yield* Effect.serviceOption(InstallationConfiguration)
      const egress = Option.getOrUndefined(installation)?.backends.flatMap((backend) =>
        backend.type === "sandbox_gateway" && backend.configuration.egress !== undefined ? [backend.configuration.egress] : []
      )[0]
      if (egress === undefined) {
        return yield* new WorkFailure({
          code: "NOT_IMPLEMENTED",
          message: "No Credential Gateway egress is configured for credential_source delivery.",
          permanent: true
        })
      }
      return { method: "credential_source", env: {}, egress: { url: egress, placeholder: credentialSourcePlaceholder(auth.sourceId) } } satisfies HarnessSpec
    }
    return undefined
  }).pipe(Effect.provide(Repos))
