/** `svc ns list|create|get|delete`. */
import { CreateNamespace, type Namespace } from "@svc/core/api"
import { Effect } from "effect"
import { parse } from "../args.js"
import type { CommandContext, CommandGroup } from "../command.js"
import { withConnection } from "../connection.js"
import { UsageError } from "../failures.js"
import { decodeInput } from "../input.js"
import { fields, print, table } from "../output.js"
import { listNamespaces, namespaceIdOf } from "../resolve.js"

const USAGE = "svc ns list | create <name> | get <id-or-name> | delete <id-or-name>"

const rows = (namespaces: ReadonlyArray<Namespace>) =>
  table(["ID", "NAME", "STATUS", "CREATED"], namespaces.map((n) => [n.id, n.name, n.status, n.createdAt]))

const one = (namespace: Namespace) =>
  fields([["id", namespace.id], ["name", namespace.name], ["status", namespace.status], ["createdAt", namespace.createdAt], ["updatedAt", namespace.updatedAt]])

const run = (argv: ReadonlyArray<string>, context: CommandContext) =>
  Effect.gen(function* () {
    const [sub, ...rest] = argv
    switch (sub) {
      case "list": {
        const args = yield* parse(rest, {}, { min: 0, max: 0, usage: "svc ns list" })
        return yield* withConnection(context.credentialsFile, ({ client }) =>
          Effect.flatMap(listNamespaces(client), (namespaces) => print(args.json, namespaces, rows)))
      }
      case "create": {
        const args = yield* parse(rest, {}, { min: 1, max: 1, usage: "svc ns create <name>" })
        const payload = yield* decodeInput(CreateNamespace, { name: args.positionals[0]! }, "the Namespace name")
        return yield* withConnection(context.credentialsFile, ({ client }) =>
          Effect.flatMap(client.namespaces.create({ payload }), (namespace) => print(args.json, namespace, one)))
      }
      case "get": {
        const args = yield* parse(rest, {}, { min: 1, max: 1, usage: "svc ns get <id-or-name>" })
        return yield* withConnection(context.credentialsFile, ({ client }) =>
          namespaceIdOf(client, args.positionals[0]!).pipe(
            Effect.flatMap((namespaceId) => client.namespaces.get({ path: { namespaceId } })),
            Effect.flatMap((namespace) => print(args.json, namespace, one))
          ))
      }
      case "delete": {
        const args = yield* parse(rest, {}, { min: 1, max: 1, usage: "svc ns delete <id-or-name>" })
        return yield* withConnection(context.credentialsFile, ({ client }) =>
          namespaceIdOf(client, args.positionals[0]!).pipe(
            Effect.flatMap((namespaceId) => client.namespaces.delete({ path: { namespaceId } })),
            Effect.flatMap((namespace) => print(args.json, namespace, one))
          ))
      }
      default:
        return yield* new UsageError({ message: `usage: ${USAGE}` })
    }
  })

export const namespaceCommands: CommandGroup = {
  names: ["ns"],
  usage: [
    ["svc ns list", "the Namespaces you can read"],
    ["svc ns create <name>", "create a Namespace (provisioned in the background)"],
    ["svc ns get <id-or-name>", "one Namespace"],
    ["svc ns delete <id-or-name>", "delete an empty Namespace (torn down in the background)"]
  ],
  run
}
