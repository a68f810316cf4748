import { AgentsRepo, RevisionsRepo } from "@svc/core/db"
import { NotFound } from "@svc/core/errors"
import type { AgentId, NamespaceId, RevisionId } from "@svc/core/schema"
import { Effect, Option } from "effect"
import { agentNotFound } from "./views.js"

const revisionNotFound = () => new NotFound({ message: "The revision does not exist." })

/** The lookups the Agents API's services share: 404 when the Agent or revision is not there. */
export class AgentLookup extends Effect.Service<AgentLookup>()("@svc/api/AgentLookup", {
  effect: Effect.gen(function* () {
    const agents = yield* AgentsRepo
    const revisions = yield* RevisionsRepo
    return {
      /** The live Agent; with `lock`, FOR UPDATE for the rest of the caller's transaction. */
      require: (namespaceId: NamespaceId, agentId: AgentId, lock: boolean) =>
        Effect.flatMap(agents.findLive({ id: agentId, namespace_id: namespaceId }, lock), Option.match({
          onNone: () => Effect.fail(agentNotFound()),
          onSome: Effect.succeed
        })),
      /** The Agent's revision under its live Namespace. */
      requireRevision: (namespaceId: NamespaceId, agentId: AgentId, revisionId: RevisionId) =>
        Effect.flatMap(revisions.findLive({ id: revisionId, agent_id: agentId, namespace_id: namespaceId }), Option.match({
          onNone: () => Effect.fail(revisionNotFound()),
          onSome: Effect.succeed
        }))
    }
  }),
  dependencies: [AgentsRepo.Default, RevisionsRepo.Default]
}) {}
