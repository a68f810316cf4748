/**
 * The credential a provisioned Agent's harness binding names (SPEC 2.5): a credential source or
 * a service account. Admission checked it; between admission and the `transport` phase nothing
 * referenced it, so its DELETE could pass. The phase therefore locks it FOR KEY SHARE in the
 * transaction that writes the Agent (a DELETE that looks later sees the Agent, SPEC 4.5, 4.6)
 * and fails for good when it is gone (404) or no longer `ready` (409: a `registering` or
 * `deleting` source cannot be bound, SPEC 3). The locks are the repositories' own, the ones
 * admission takes.
 */
import { CredentialSourcesRepo, ServiceAccountsRepo } from "@svc/core/db"
import { CredentialSourceId, type NamespaceId, ServiceAccountId } from "@svc/core/schema"
import { Effect, Option, Schema } from "effect"
import { WorkFailure } from "../engine/failure.js"

const BoundCredential = Schema.Struct({
  harnessAuth: Schema.Union(
    Schema.Struct({ method: Schema.Literal("credential_source"), sourceId: Schema.String }),
    Schema.Struct({ method: Schema.Literal("provider_service_account"), serviceAccountId: Schema.String })
  )
})
const boundCredential = Schema.decodeUnknownOption(BoundCredential)

/**
 * The bound row's state, locked through its repository (a database failure stays an SqlError: the
 * phase retries on it); none when the Namespace has no such row, as for an id of another shape.
 */
const lockedState = (namespaceId: NamespaceId, auth: typeof BoundCredential.Type["harnessAuth"]) =>
  Effect.gen(function* () {
    if (auth.method === "credential_source") {
      if (!CredentialSourceId.isValid(auth.sourceId)) return Option.none()
      const sources = yield* CredentialSourcesRepo
      return Option.map(yield* sources.lockForBindingRetryable({ id: auth.sourceId, namespace_id: namespaceId }), (row) => row.state)
    }
    if (!ServiceAccountId.isValid(auth.serviceAccountId)) return Option.none()
    const accounts = yield* ServiceAccountsRepo
    return Option.map(yield* accounts.lockSharedRetryable({ id: auth.serviceAccountId, namespace_id: namespaceId }), (row) => row.state)
  })

export const lockBoundCredential = (namespaceId: NamespaceId, settings: unknown) =>
  Effect.gen(function* () {
    const bound = boundCredential(settings)
    if (Option.isNone(bound)) return
    const auth = bound.value.harnessAuth
    const what = auth.method === "credential_source" ? "credential source" : "service account"
    const state = Option.getOrUndefined(yield* lockedState(namespaceId, auth))
    if (state === "ready") return
    return yield* new WorkFailure(
      state === undefined
        ? { code: "NOT_FOUND", message: `The ${what} the request binds no longer exists in the Namespace.`, permanent: true }
        : { code: "RESOURCE_CONFLICT", message: `The ${what} the request binds is ${state}.`, permanent: true }
    )
  })
