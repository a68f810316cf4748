/**
 * Who may aim an Agent's model credential (SPEC 2.5, 2.8; docs/decisions/configurations.md
 * "Model-credential endpoints"). Binding a credential needs the caller's exact grant on it; the
 * Configuration's `values` decide where that credential goes, so a change of them that could send
 * it somewhere new needs the same grant, from whoever makes the change:
 * - `api_key`: the Secret reaches the gateway's environment beside the values, like a Secret
 *   binding, and every value (a provider `baseUrl`, a tool endpoint, a command) can carry it away:
 *   every change needs `operate` on it.
 * - `direct_token`, `provider_service_account`, `credential_source`: only the harness holds the
 *   credential, and it sends it only to the providers' base URLs: a change that introduces a base
 *   URL needs `operate` on the Secret, `read` on the account, or `operate` on the source.
 * A refusal is 403 whether or not the caller may read the credential: the resource it named (the
 * Configuration or the Agent) exists, and the answer names no credential.
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import { type HarnessAuth, readSavedSettings } from "@svc/core/api"
import { introducesModelEndpoint } from "@svc/core/drivers/compute"
import { Forbidden } from "@svc/core/errors"
import type { Permission, ResourceRef } from "@svc/core/iam"
import { Effect, Option, Schema } from "effect"
import { Authorization } from "../auth/authorize.js"
import { credentialSourceRef } from "../credentialSources/policy.js"
import { secretRef } from "../secrets/policy.js"
import { serviceAccountRef } from "../serviceAccounts/policy.js"

type Values = Readonly<Record<string, unknown>>

const Values = Schema.Record({ key: Schema.String, value: Schema.Unknown })

/** The grant that binds the credential `auth` delivers (SPEC 2.5); none for `runtime`. */
const bindingGrant = (namespaceId: string, auth: HarnessAuth): { readonly permission: Permission; readonly resource: ResourceRef } | undefined => {
  switch (auth.method) {
    case "api_key":
    case "direct_token":
      return { permission: "secret:operate", resource: secretRef(namespaceId, auth.source.id) }
    case "provider_service_account":
      return { permission: "service_account:read", resource: serviceAccountRef(namespaceId, auth.serviceAccountId) }
    case "credential_source":
      return { permission: "credential_source:operate", resource: credentialSourceRef(namespaceId, auth.sourceId) }
    case "runtime":
      return undefined
  }
}

/** Whether giving an Agent bound with `auth` the values `after` instead of `before` can send its credential somewhere new. */
const redirects = (auth: HarnessAuth, before: Values, after: Values) =>
  auth.method === "api_key" || introducesModelEndpoint(before, after)

const refused = (grant: { readonly permission: Permission }) =>
  new Forbidden({
    message: `The change can send an Agent's model credential to a new endpoint; it needs ${grant.permission} on that credential, as binding it does.`
  })

export class ModelCredentials extends Effect.Service<ModelCredentials>()("@svc/api/ModelCredentials", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const { authorize } = yield* Authorization

    /** Agents whose next deployment takes this Configuration (a deleting Agent deploys no more). */
    const draftsOf = SqlSchema.findAll({
      Request: Schema.Struct({ namespace_id: Schema.String, configuration_id: Schema.String }),
      Result: Schema.Struct({ settings: Schema.Unknown }),
      execute: (key) => sql`
        SELECT settings FROM agents
        WHERE namespace_id = ${key.namespace_id} AND configuration_id = ${key.configuration_id} AND status = 'active'
        ORDER BY id
      `
    })

    const valuesOf = SqlSchema.findOne({
      Request: Schema.Struct({ namespace_id: Schema.String, id: Schema.String }),
      Result: Schema.Struct({ values: Values }),
      execute: (key) => sql`SELECT "values" FROM configurations WHERE id = ${key.id} AND namespace_id = ${key.namespace_id}`
    })

    /** `granted` holds the grants already allowed in this admission: many Agents share one credential. */
    const requireGrant = (namespaceId: string, auth: HarnessAuth, before: Values, after: Values, granted = new Set<string>()) =>
      Effect.gen(function* () {
        const grant = bindingGrant(namespaceId, auth)
        if (grant === undefined || !redirects(auth, before, after)) return
        const key = `${grant.permission} ${JSON.stringify(grant.resource)}`
        if (granted.has(key)) return
        granted.add(key)
        yield* authorize(grant.permission, grant.resource).pipe(
          Effect.catchTags({ NotFound: () => Effect.fail(refused(grant)), Forbidden: () => Effect.fail(refused(grant)) })
        )
      })

    /**
     * A Configuration PATCH from `before` to `after` values, against every active Agent that takes
     * it. Call after the Configuration's row is locked: an Agent saved concurrently then either
     * committed first (and is seen here) or chose the Configuration with the new values.
     */
    const admitValuesChange = (namespaceId: string, configurationId: string, before: Values, after: Values) =>
      Effect.gen(function* () {
        const drafts = yield* draftsOf({ namespace_id: namespaceId, configuration_id: configurationId }).pipe(Effect.orDie)
        const granted = new Set<string>()
        for (const draft of drafts) {
          // An unreadable binding cannot be deployed until an update supplies one, which is admitted.
          const auth = readSavedSettings(draft.settings).settings.harnessAuth
          if (auth !== undefined && auth !== null) yield* requireGrant(namespaceId, auth, before, after, granted)
        }
      })

    /** An Agent update that keeps its binding `kept` and moves it from one Configuration to another. */
    const admitConfigurationSwap = (namespaceId: string, kept: HarnessAuth | null | undefined, from: string, to: string) =>
      Effect.gen(function* () {
        if (kept === undefined || kept === null || from === to) return
        const before = yield* valuesOf({ namespace_id: namespaceId, id: from }).pipe(Effect.orDie)
        const after = yield* valuesOf({ namespace_id: namespaceId, id: to }).pipe(Effect.orDie)
        yield* requireGrant(
          namespaceId,
          kept,
          Option.match(before, { onNone: () => ({}), onSome: (row) => row.values }),
          Option.match(after, { onNone: () => ({}), onSome: (row) => row.values })
        )
      })

    return { admitValuesChange, admitConfigurationSwap }
  }),
  dependencies: [Authorization.Default]
}) {}
