/**
 * `svc deploy <agent> --ns <ns> [--wait]` (also `svc agents deploy`): admits a deployment of the
 * saved draft; with `--wait`, follows it to `succeeded` (exit 0) or `failed` (exit 9).
 */
import type { DeploymentStatus } from "@svc/core/api"
import { Effect } from "effect"
import { parse, requiredFlag } from "../args.js"
import type { CommandContext, CommandGroup } from "../command.js"
import { withConnection } from "../connection.js"
import { progressView } from "../deployments/progress.js"
import { pollingUpdates, watchDeployment } from "../deployments/watch.js"
import { DeploymentFailed } from "../failures.js"
import { fields, print } from "../output.js"
import { agentIdOf, namespaceIdOf } from "../resolve.js"

export const DEPLOY_USAGE = "svc deploy <agent> --ns <ns> [--wait]"

const POLL_INTERVAL = "1 second"

const summary = (status: DeploymentStatus) =>
  fields([
    ["deployment", status.deploymentId],
    ["status", status.status],
    ...(status.error === null ? [] : [["error", `${status.error.code}: ${status.error.message}`] as const]),
    ...(status.warnings.length === 0 ? [] : [["warnings", status.warnings.map((w) => `${w.code}(${w.pluginId})`).join(", ")] as const])
  ])

export const deploy = (argv: ReadonlyArray<string>, context: CommandContext, usage: string) =>
  Effect.gen(function* () {
    const args = yield* parse(argv, { ns: { type: "string" }, wait: { type: "boolean" } }, { min: 1, max: 1, usage })
    const ns = yield* requiredFlag(args, "ns", usage)
    yield* withConnection(context.credentialsFile, ({ client }) =>
      Effect.gen(function* () {
        const namespaceId = yield* namespaceIdOf(client, ns)
        const agentId = yield* agentIdOf(client, namespaceId, args.positionals[0]!)
        const revision = yield* client.agents.deploy({ path: { namespaceId, agentId } })
        if (args.values.wait !== true) {
          return yield* print(args.json, revision, (r) => `deployment ${r.id} admitted; follow it with --wait`)
        }
        // With --json stdout carries only the final document; progress goes to stderr.
        const view = progressView(args.json ? process.stderr : process.stdout, (args.json ? process.stderr : process.stdout).isTTY === true)
        const updates = pollingUpdates(client, POLL_INTERVAL)({ namespaceId, agentId, deploymentId: revision.id })
        const final = yield* watchDeployment(updates, view.show).pipe(Effect.ensuring(view.finish))
        yield* print(args.json, final, summary)
        if (final.status === "failed") {
          return yield* new DeploymentFailed({
            code: final.error?.code ?? "DEPLOYMENT_FAILED",
            message: final.error?.message ?? "the deployment failed"
          })
        }
      }))
  })

export const deployCommand: CommandGroup = {
  names: ["deploy"],
  usage: [[DEPLOY_USAGE, "deploy an Agent's saved draft; --wait follows it until it ends"]],
  run: (argv, context) => deploy(argv, context, DEPLOY_USAGE)
}
