/**
 * Commands accept a Namespace or an Agent by ID (`ns_…`, `agt_…`) or by name; a name is looked
 * up in the full list (every page), and an unknown one is the service's own 404 shape.
 */
import type { Client } from "@svc/core/client"
import { NotFound } from "@svc/core/errors"
import { AgentId, NamespaceId } from "@svc/core/schema"
import { Effect, Option, Schema } from "effect"
import { UsageError } from "./failures.js"

const PAGE = 1000

/** A malformed ID is a usage error: nothing is sent. */
export const parseId = <A>(schema: Schema.Schema<A, string>, raw: string, what: string): Effect.Effect<A, UsageError> =>
  Option.match(Schema.decodeUnknownOption(schema)(raw), {
    onNone: () => Effect.fail(new UsageError({ message: `${raw} is not a well-formed ${what} ID` })),
    onSome: Effect.succeed
  })

/** Every page of a listing that pages with `after` (the last ID of the previous page). */
export const listAll = <A extends { readonly id: string }, E>(
  page: (urlParams: { readonly limit: number; readonly after?: string }) => Effect.Effect<ReadonlyArray<A>, E>
): Effect.Effect<ReadonlyArray<A>, E> =>
  Effect.gen(function* () {
    const all: Array<A> = []
    let after: string | undefined
    for (;;) {
      const items = yield* page(after === undefined ? { limit: PAGE } : { limit: PAGE, after })
      all.push(...items)
      if (items.length < PAGE) return all
      after = items[items.length - 1]!.id
    }
  })

export const listNamespaces = (client: Client) => listAll((urlParams) => client.namespaces.list({ urlParams }))

export const listAgents = (client: Client, namespaceId: NamespaceId) =>
  listAll((urlParams) => client.agents.list({ path: { namespaceId }, urlParams }))

export const namespaceIdOf = (client: Client, idOrName: string) =>
  Effect.gen(function* () {
    if (idOrName.startsWith("ns_")) return yield* parseId(NamespaceId, idOrName, "Namespace")
    const found = (yield* listNamespaces(client)).find((namespace) => namespace.name === idOrName)
    if (found === undefined) return yield* new NotFound({ message: `no Namespace named ${idOrName} that you can read` })
    return found.id
  })

export const agentIdOf = (client: Client, namespaceId: NamespaceId, idOrName: string) =>
  Effect.gen(function* () {
    if (idOrName.startsWith("agt_")) return yield* parseId(AgentId, idOrName, "Agent")
    const found = (yield* listAgents(client, namespaceId)).find((agent) => agent.name === idOrName)
    if (found === undefined) return yield* new NotFound({ message: `no Agent named ${idOrName} in this Namespace that you can read` })
    return found.id
  })
