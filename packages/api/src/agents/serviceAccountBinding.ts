/**
 * `provider_service_account` harness bindings (SPEC 2.5, 7.3): the caller's exact `read` on the
 * account (on the current one too when an update replaces or clears it), an account of this
 * Namespace that is ready with a usable credential, and the Agent's `backendId` matching the
 * account's Backend. The account row is locked FOR KEY SHARE for the caller's transaction, so
 * its deletion (which checks Agent drafts under FOR UPDATE) cannot pass an Agent being saved.
 */
import { ServiceAccountsRepo } from "@svc/core/db"
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
        if (credential === null || !credential.ready) {
          return yield* new ResourceConflict({ message: "The service account has no issued credential ready for use." })
        }
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

    return { admit, admitUpdate }
  }),
  dependencies: [ServiceAccountsRepo.Default, Authorization.Default]
}) {}
