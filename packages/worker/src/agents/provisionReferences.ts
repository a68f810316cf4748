/**
 * The credential a provisioned Agent's harness binding names (SPEC 2.5): a credential source or
 * a service account. Admission checked it; between admission and the `transport` phase nothing
 * referenced it, so its DELETE could pass. The phase therefore locks it FOR KEY SHARE in the
 * transaction that writes the Agent (a DELETE that looks later sees the Agent, SPEC 4.5, 4.6)
 * and fails for good when it is gone (404) or no longer `ready` (409: a `registering` or
 * `deleting` source cannot be bound, SPEC 3).
 */
import { SqlClient } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { WorkFailure } from "../engine/failure.js"

const BoundCredential = Schema.Struct({
  harnessAuth: Schema.Union(
    Schema.Struct({ method: Schema.Literal("credential_source"), sourceId: Schema.String }),
    Schema.Struct({ method: Schema.Literal("provider_service_account"), serviceAccountId: Schema.String })
  )
})
const boundCredential = Schema.decodeUnknownOption(BoundCredential)

export const lockBoundCredential = (namespaceId: string, settings: unknown) =>
  Effect.gen(function* () {
    const bound = boundCredential(settings)
    if (Option.isNone(bound)) return
    const sql = yield* SqlClient.SqlClient
    const auth = bound.value.harnessAuth
    const [what, rows] = auth.method === "credential_source"
      ? ["credential source", yield* sql<{ state: string }>`
          SELECT state FROM credential_sources WHERE id = ${auth.sourceId} AND namespace_id = ${namespaceId} FOR KEY SHARE`] as const
      : ["service account", yield* sql<{ state: string }>`
          SELECT state FROM service_accounts WHERE id = ${auth.serviceAccountId} AND namespace_id = ${namespaceId} FOR KEY SHARE`] as const
    const state = rows[0]?.state
    if (state === "ready") return
    return yield* new WorkFailure(
      state === undefined
        ? { code: "NOT_FOUND", message: `The ${what} the request binds no longer exists in the Namespace.`, permanent: true }
        : { code: "RESOURCE_CONFLICT", message: `The ${what} the request binds is ${state}.`, permanent: true }
    )
  })
