/**
 * Rollback (DESIGN §18, an extension): `POST .../revisions/{revisionId}/redeploy` makes a NEW
 * revision from an earlier revision's frozen snapshot and queues it exactly as deploy does
 * (SPEC 3: an old revision is never restarted). The saved draft is left as it is.
 */
import { SqlClient } from "@effect/sql"
import { readSavedSettings } from "@svc/core/api"
import { ResourceConflict } from "@svc/core/errors"
import type { AgentId, NamespaceId, RevisionId } from "@svc/core/schema"
import { Effect, Schema } from "effect"
import { Authorization } from "../auth/authorize.js"
import { AgentLookup } from "./lookup.js"
import { agentRef, revisionRef } from "./policy.js"
import { FrozenConfiguration, RevisionQueue, type RevisionSource } from "./revisionQueue.js"
import { exportedFn } from "@svc/core/observability"

const decodeBindings = Schema.decodeUnknown(FrozenConfiguration.fields.secret_bindings)

export class Rollback extends Effect.Service<Rollback>()("@svc/api/Rollback", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const lookup = yield* AgentLookup
    const { authorize } = yield* Authorization
    const queue = yield* RevisionQueue

    /**
     * Needs `deploy` on the Agent and `read` on the source revision. The active revision may be
     * the source too: that is a fresh start of the same snapshot as a new revision.
     */
    const redeploy = exportedFn("Agents.redeploy")(function* (namespaceId: NamespaceId, agentId: AgentId, revisionId: RevisionId) {
      yield* authorize("agent:deploy", agentRef(namespaceId, agentId))
      yield* authorize("agent_revision:read", revisionRef(namespaceId, revisionId))
      const write = Effect.gen(function* () {
        const agent = yield* lookup.require(namespaceId, agentId, true)
        const old = yield* lookup.requireRevision(namespaceId, agentId, revisionId)
        const frozen = Effect.gen(function* () {
          const snapshot = old.snapshot
          const { settings, unreadable } = readSavedSettings({
            harnessAuth: snapshot.harness.auth ?? null,
            plugins: snapshot.plugins.plugins ?? {},
            pluginApprovers: snapshot.pluginApprovers ?? null
          })
          const harnessAuth = settings.harnessAuth ?? null
          if (unreadable.length > 0 || harnessAuth === null) {
            return yield* new ResourceConflict({ message: `The revision's frozen ${unreadable[0] ?? "harnessAuth"} is unreadable; it cannot be redeployed.` })
          }
          const secretBindings = yield* decodeBindings(snapshot.secretBindings).pipe(
            Effect.mapError(() => new ResourceConflict({ message: "The revision's frozen Secret bindings are unreadable; it cannot be redeployed." }))
          )
          return {
            configurationId: snapshot.configurationId,
            executionMode: snapshot.harness.mode,
            backendId: snapshot.backendId,
            harnessAuth,
            plugins: settings.plugins,
            pluginApprovers: settings.pluginApprovers ?? null,
            repositoryCredentials: snapshot.repositoryCredentials,
            // The values and generation the revision froze, not the Configuration's current ones.
            configuration: Effect.succeed({
              id: snapshot.configurationId,
              generation: snapshot.configurationGeneration,
              values: snapshot.configuration,
              secret_bindings: secretBindings
            }),
            rolledBackFrom: old.id
          } satisfies RevisionSource
        })
        return yield* queue.admitAndQueue(namespaceId, agent, frozen)
      })
      return yield* sql.withTransaction(write).pipe(Effect.catchTag("SqlError", Effect.die))
    })

    return { redeploy }
  }),
  dependencies: [AgentLookup.Default, Authorization.Default, RevisionQueue.Default]
}) {}
