/**
 * The `credential_source` harness binding (SPEC 2.5, 3, 4.6) and the deployment rule a selected
 * Credential Gateway adds. At admission: the caller's `credential_source:operate`, a source of
 * this Namespace, and `ready` (a `registering` or `deleting` one cannot be bound), locked FOR KEY
 * SHARE so a DELETE waits for the binding and then sees it. At deployment: the Agent principal's
 * exact `operate` on the source (no Secret permission: the gateway holds the value); and while a
 * Credential Gateway is selected, bindings that would hand the Agent a key itself are refused.
 */
import type { HarnessAuth } from "@svc/core/api"
import type { InstallationConfig } from "@svc/core/config"
import type { CredentialSourcesRepo } from "@svc/core/db"
import { NotFound, ResourceConflict } from "@svc/core/errors"
import type { CurrentCaller, Permission, ResourceRef } from "@svc/core/iam"
import type { CredentialSourceId, NamespaceId } from "@svc/core/schema"
import { Effect, Option } from "effect"
import type { AuthorizationError, Authorization } from "../auth/authorize.js"
import { credentialSourceRef } from "../credentialSources/policy.js"

type Authorize = (required: Permission, resource: ResourceRef) => Effect.Effect<void, AuthorizationError, CurrentCaller>
type AuthorizeAgentPrincipal = Authorization["authorizeAgentPrincipal"]

export const credentialSourceBinding = (authorize: Authorize, repo: CredentialSourcesRepo) =>
  (namespaceId: string, sourceId: CredentialSourceId) =>
    Effect.gen(function* () {
      yield* authorize("credential_source:operate", credentialSourceRef(namespaceId, sourceId))
      const row = yield* repo.lockForBinding({ id: sourceId, namespace_id: namespaceId as NamespaceId })
      if (Option.isNone(row)) return yield* new NotFound({ message: "The credential source does not exist in this Namespace." })
      if (row.value.state !== "ready") {
        return yield* new ResourceConflict({ message: `The credential source is ${row.value.state}; only a ready source can be bound.` })
      }
    })

/** The methods that deliver a key to the Agent: refused at deployment behind a Credential Gateway. */
const keyDelivering: ReadonlySet<string> = new Set(["api_key", "direct_token", "provider_service_account"])

export const harnessAtDeploy = (installation: InstallationConfig, authorizeAgentPrincipal: AuthorizeAgentPrincipal) =>
  (namespaceId: NamespaceId, principalId: string, auth: HarnessAuth | null) =>
    Effect.gen(function* () {
      if (auth === null) return
      if (installation.drivers.credentialGateway !== undefined && keyDelivering.has(auth.method)) {
        return yield* new ResourceConflict({
          message: `While a Credential Gateway is selected, deployment refuses harness authentication ${auth.method}; bind a credential source.`
        })
      }
      if (auth.method !== "credential_source") return
      yield* authorizeAgentPrincipal(principalId, "credential_source:operate", credentialSourceRef(namespaceId, auth.sourceId))
    })
