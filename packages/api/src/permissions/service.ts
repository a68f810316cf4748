/**
 * Permission probes (docs/decisions/console.md): the caller's permissions on one exact
 * resource, decided by the same IAM decision as every handler, after the same read check as
 * reading the resource (403/404 alike). Nothing is written: a probe is not a denial to audit.
 */
import { SqlClient } from "@effect/sql"
import { NamespacesRepo } from "@svc/core/db"
import { DependencyUnavailable, NotFound } from "@svc/core/errors"
import { CurrentCaller, decide, Installation, installationAdminPermissions, type Permission, type ResourceRef } from "@svc/core/iam"
import type { AgentId, NamespaceId } from "@svc/core/schema"
import { Effect, Option } from "effect"
import { Authorization } from "../auth/authorize.js"
import { AgentLookup } from "../agents/lookup.js"
import { agentRef } from "../agents/policy.js"
import { namespaceRef } from "../iam/access.js"
import { exportedFn } from "@svc/core/observability"

const typeOf = (p: Permission) => p.slice(0, p.indexOf(":"))

/** What may be asked of each kind of resource: the catalogue's permissions that apply to it. */
const ON_INSTALLATION = installationAdminPermissions.filter((p) => p.startsWith("installation:") || p === "namespace:create")
// On a Namespace, `<type>:<action>` held means held on everything of that type in it (a binding
// on the Namespace or above): what a list page may offer for each of its rows.
const ON_NAMESPACE = installationAdminPermissions.filter((p) => !p.startsWith("installation:") && p !== "namespace:create")
const ON_AGENT = installationAdminPermissions.filter((p) => typeOf(p) === "agent" && p !== "agent:create")

export class Permissions extends Effect.Service<Permissions>()("@svc/api/Permissions", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const { authorize } = yield* Authorization
    const namespaces = yield* NamespacesRepo
    const agents = yield* AgentLookup

    const held = (candidates: ReadonlyArray<Permission>, resource: ResourceRef) =>
      Effect.gen(function* () {
        const caller = yield* CurrentCaller
        const decisions = yield* Effect.forEach(candidates, (p) =>
          Effect.map(decide(caller, p, resource), (d) => d._tag === "Allowed" ? [p] : []))
        return { permissions: decisions.flat().sort() }
      }).pipe(
        Effect.provideService(SqlClient.SqlClient, sql),
        Effect.catchTag("SqlError", () => Effect.fail(new DependencyUnavailable({ message: "Authorization is unavailable; retry later." })))
      )

    const onInstallation = exportedFn("Permissions.installation")(function* () {
      return yield* held(ON_INSTALLATION, Installation)
    })

    const onNamespace = exportedFn("Permissions.namespace")(function* (namespaceId: NamespaceId) {
      yield* authorize("namespace:read", namespaceRef(namespaceId))
      if (Option.isNone(yield* namespaces.findLive(namespaceId).pipe(Effect.orDie))) {
        return yield* new NotFound({ message: "The Namespace does not exist." })
      }
      return yield* held(ON_NAMESPACE, namespaceRef(namespaceId))
    })

    const onAgent = exportedFn("Permissions.agent")(function* (namespaceId: NamespaceId, agentId: AgentId) {
      yield* authorize("agent:read", agentRef(namespaceId, agentId))
      yield* agents.require(namespaceId, agentId, false)
      return yield* held(ON_AGENT, agentRef(namespaceId, agentId))
    })

    return { onInstallation, onNamespace, onAgent }
  }),
  dependencies: [Authorization.Default, NamespacesRepo.Default, AgentLookup.Default]
}) {}
