/**
 * Why a gateway rejected its configuration. The gateway reads its configuration read-only
 * (`OPENCLAW_CONFIG_READONLY`), and OpenClaw then reports an invalid document without naming the
 * offending key; `openclaw config validate`, launched the same way (same user and sandbox) but
 * without the token or the Agent's Secrets, appends the reason to the Agent's log.
 */
import * as path from "node:path"
import { Redacted } from "effect"
import { type Confinement, launchCommand } from "./confinement.js"
import { gatewayEnvironment } from "./environment.js"
import { runToLog } from "./gatewayProcess.js"
import type { GatewayUser } from "./gatewayUser.js"
import type { AgentLayout } from "./layout.js"
import type { RuntimePaths } from "./runtime.js"

export const explainRejectedConfig = async (input: {
  readonly confinement: Confinement
  readonly runtime: RuntimePaths
  readonly layout: AgentLayout
  readonly owner: GatewayUser | undefined
}): Promise<void> => {
  const { layout, runtime } = input
  const launch = await launchCommand(
    input.confinement,
    { runtimeDirectory: runtime.directory, agentRoot: layout.root, workspace: layout.workspace, user: input.owner },
    [runtime.node, runtime.entry, "config", "validate"]
  )
  const { OPENCLAW_GATEWAY_TOKEN: _token, OPENCLAW_CONFIG_READONLY: _readOnly, ...env } = gatewayEnvironment({
    layout,
    nodeBinDir: path.dirname(runtime.node),
    token: Redacted.make(""),
    secrets: {}
  })
  await runToLog({ launch, layout, env, timeoutMs: 60_000 })
}
