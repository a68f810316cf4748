/**
 * `provider_service_account` harness bindings (SPEC 2.5, 7.3): the caller's exact `read` on the
 * account (on the current one too when an update replaces or clears it), an account of this
 * Namespace that is ready with a usable credential, and the Agent's `backendId` matching the
 * account's Backend. The account row is locked FOR KEY SHARE for the caller's transaction, so
 * its deletion (which checks Agent drafts under FOR UPDATE) cannot pass an Agent being saved.
 * A deploy then freezes the account's credential kind and Secret reference (SPEC 2.6).
 */
import { type FrozenCredential, ServiceAccountsRepo, type ServiceAccountRow } from "@svc/core/db"
import { NotFound, ResourceConflict } from "@svc/core/errors"
import { NamespaceId, ServiceAccountId } from "@svc/core/schema"
import { Effect, Option, Schema } from "effect"
import { Authorization } from "../auth/authorize.js"
import { serviceAccountRef } from "../serviceAccounts/policy.js"
import { toServiceAccount } from "../serviceAccounts/views.js"

const SavedBinding = Schema.Struct({ method: Schema.Literal("provider_service_account"), serviceAccountId: ServiceAccountId })

/** The account a saved (possibly unreadable) harness binding names, if any. */
const savedAccountOf = (saved: unknown): ServiceAccountId | undefined =>
  Option.getOrUndefined(Option.map(Schema.decodeUnknownOption(SavedBinding)(saved), (b) => b.serviceAccountId))

const accountOf = (auth: { readonly method: string } | null | undefined): ServiceAccountId | undefined =>
  auth !== null && auth !== undefined && auth.method === "provider_service_account" ? savedAccountOf(auth) : undefined

/** What a revision freezes of the account's credential (SPEC 2.6): never its bytes. */
const frozenCredentialOf = (row: ServiceAccountRow): FrozenCredential | undefined => {
  if (row.credential_kind === "access_token") return { kind: "access_token" }
  if (row.credential_kind === "api_key" && row.credential_secret_id !== null && row.credential_secret_key !== null) {
    return { kind: "api_key", secretRef: { id: row.credential_secret_id, key: row.credential_secret_key } }
  }
  return undefined
}

const noCredential = () => new ResourceConflict({ message: "The service account has no issued credential ready for use." })

export class ServiceAccountBinding extends Effect.Service<ServiceAccountBinding>()("@svc/api/ServiceAccountBinding", {
  effect: Effect.gen(function* () {
    const repo = yield* ServiceAccountsRepo
    const { authorize } = yield* Authorization

    /** The account a draft binds, against the draft's Backend association. */
    const admit = (namespaceId: string, serviceAccountId: ServiceAccountId, backendId: string | null) =>
      Effect.gen(function* () {
        yield* authorize("service_account:read", serviceAccountRef(namespaceId, serviceAccountId))
        const row = NamespaceId.isValid(namespaceId)
          ? yield* repo.lockShared({ id: serviceAccountId, namespace_id: namespaceId })
          : Option.none()
        if (Option.isNone(row)) return yield* new NotFound({ message: "The service account does not exist in this Namespace." })
        const credential = toServiceAccount(row.value).credential
        if (credential === null || !credential.ready) return yield* noCredential()
        if (row.value.backend_id !== backendId) {
          return yield* new ResourceConflict({ message: "The Agent's backendId does not match the service account's Backend." })
        }
      })

    /**
     * An update: replacing or clearing a saved account binding needs `read` on the saved account
     * (the new one is admitted with the draft); a Backend change under a kept binding is
     * admitted again, since it must still match the account.
     */
    const admitUpdate = (
      namespaceId: NamespaceId,
      saved: unknown,
      supplied: { readonly method: string } | null | undefined,
      backend: { readonly before: string | null; readonly after: string | null }
    ) =>
      Effect.gen(function* () {
        const current = savedAccountOf(saved)
        if (current === undefined) return
        if (supplied === undefined) {
          if (backend.before !== backend.after) yield* admit(namespaceId, current, backend.after)
          return
        }
        if (accountOf(supplied) !== current) {
          yield* authorize("service_account:read", serviceAccountRef(namespaceId, current))
        }
      })

    /**
     * At deploy, after `admit` (whose lock is held): the admitted account's credential as the
     * revision freezes it; undefined for any other binding.
     */
    const freeze = (namespaceId: NamespaceId, auth: { readonly method: string } | null) =>
      Effect.gen(function* () {
        const serviceAccountId = accountOf(auth)
        if (serviceAccountId === undefined) return undefined
        const row = yield* repo.lockShared({ id: serviceAccountId, namespace_id: namespaceId })
        const frozen = Option.isSome(row) ? frozenCredentialOf(row.value) : undefined
        if (frozen === undefined) return yield* noCredential()
        return frozen
      })

    return { admit, admitUpdate, freeze }
  }),
  dependencies: [ServiceAccountsRepo.Default, Authorization.Default]
}) {}
