/** `svc agents list|create|get|deploy|stop|delete`, each in a Namespace given with `--ns`. */
import { type Agent, CreateAgent } from "@svc/core/api"
import { Effect } from "effect"
import * as fs from "node:fs/promises"
import { parse, type Parsed, requiredFlag } from "../args.js"
import type { CommandContext, CommandGroup } from "../command.js"
import { type Connection, withConnection } from "../connection.js"
import { UsageError } from "../failures.js"
import { decodeInput } from "../input.js"
import { fields, print, table } from "../output.js"
import { agentIdOf, listAgents, namespaceIdOf } from "../resolve.js"
import { deploy } from "./deploy.js"

const USAGE = "svc agents list | create --file <agent.json> | get | deploy [--wait] | stop | delete <agent>  --ns <ns>"

const rows = (agents: ReadonlyArray<Agent>) =>
  table(
    ["ID", "NAME", "STATUS", "DESIRED", "ACTIVE REVISION", "CREATED"],
    agents.map((a) => [a.id, a.name, a.status, a.desiredRuntimeState, a.activeRevisionId, a.createdAt])
  )

const one = (agent: Agent) =>
  fields([
    ["id", agent.id],
    ["name", agent.name],
    ["namespaceId", agent.namespaceId],
    ["configurationId", agent.configurationId],
    ["status", agent.status],
    ["desiredRuntimeState", agent.desiredRuntimeState],
    ["activeRevisionId", agent.activeRevisionId],
    ["servicePrincipalId", agent.servicePrincipalId],
    ["createdAt", agent.createdAt],
    ["updatedAt", agent.updatedAt]
  ])

const readAgentFile = (file: string) =>
  Effect.tryPromise({
    try: async () => JSON.parse(await fs.readFile(file, "utf8")) as unknown,
    catch: () => new UsageError({ message: `--file ${file} cannot be read as JSON` })
  }).pipe(Effect.flatMap((json) => decodeInput(CreateAgent, json, file)))

/** One Agent, named by ID or name, in the `--ns` Namespace. */
const onAgent = (
  parsed: Parsed,
  usage: string,
  context: CommandContext,
  act: (connection: Connection, path: { namespaceId: Agent["namespaceId"]; agentId: Agent["id"] }) => Effect.Effect<Agent, unknown>
) =>
  Effect.gen(function* () {
    const ns = yield* requiredFlag(parsed, "ns", usage)
    return yield* withConnection(context.credentialsFile, (connection) =>
      Effect.gen(function* () {
        const namespaceId = yield* namespaceIdOf(connection.client, ns)
        const agentId = yield* agentIdOf(connection.client, namespaceId, parsed.positionals[0]!)
        const agent = yield* act(connection, { namespaceId, agentId })
        yield* print(parsed.json, agent, one)
      }))
  })

const nsFlag = { ns: { type: "string" } } as const

const run = (argv: ReadonlyArray<string>, context: CommandContext) =>
  Effect.gen(function* () {
    const [sub, ...rest] = argv
    switch (sub) {
      case "list": {
        const usage = "svc agents list --ns <ns>"
        const args = yield* parse(rest, nsFlag, { min: 0, max: 0, usage })
        const ns = yield* requiredFlag(args, "ns", usage)
        return yield* withConnection(context.credentialsFile, ({ client }) =>
          namespaceIdOf(client, ns).pipe(
            Effect.flatMap((namespaceId) => listAgents(client, namespaceId)),
            Effect.flatMap((agents) => print(args.json, agents, rows))
          ))
      }
      case "create": {
        const usage = "svc agents create --ns <ns> --file <agent.json>"
        const args = yield* parse(rest, { ...nsFlag, file: { type: "string" } }, { min: 0, max: 0, usage })
        const ns = yield* requiredFlag(args, "ns", usage)
        const payload = yield* Effect.flatMap(requiredFlag(args, "file", usage), readAgentFile)
        return yield* withConnection(context.credentialsFile, ({ client }) =>
          namespaceIdOf(client, ns).pipe(
            Effect.flatMap((namespaceId) => client.agents.create({ path: { namespaceId }, payload })),
            Effect.flatMap((agent) => print(args.json, agent, one))
          ))
      }
      case "get": {
        const usage = "svc agents get <agent> --ns <ns>"
        const args = yield* parse(rest, nsFlag, { min: 1, max: 1, usage })
        return yield* onAgent(args, usage, context, ({ client }, path) => client.agents.get({ path }))
      }
      case "stop": {
        const usage = "svc agents stop <agent> --ns <ns>"
        const args = yield* parse(rest, nsFlag, { min: 1, max: 1, usage })
        return yield* onAgent(args, usage, context, ({ client }, path) => client.agents.stop({ path }))
      }
      case "delete": {
        const usage = "svc agents delete <agent> --ns <ns>"
        const args = yield* parse(rest, nsFlag, { min: 1, max: 1, usage })
        return yield* onAgent(args, usage, context, ({ client }, path) => client.agents.delete({ path }))
      }
      case "deploy":
        return yield* deploy(rest, context, "svc agents deploy <agent> --ns <ns> [--wait]")
      default:
        return yield* new UsageError({ message: `usage: ${USAGE}` })
    }
  })

export const agentCommands: CommandGroup = {
  names: ["agents"],
  usage: [
    ["svc agents list --ns <ns>", "the Agents of a Namespace"],
    ["svc agents create --ns <ns> --file <agent.json>", "create an Agent from a JSON request body (SPEC 4.4)"],
    ["svc agents get <agent> --ns <ns>", "one Agent, by ID or name"],
    ["svc agents deploy <agent> --ns <ns> [--wait]", "same as svc deploy"],
    ["svc agents stop <agent> --ns <ns>", "stop the Agent's gateway"],
    ["svc agents delete <agent> --ns <ns>", "delete the Agent (torn down in the background)"]
  ],
  run
}
