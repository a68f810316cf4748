/**
 * The gateways running on this host: what the recovery sweep adopts or stops after a worker
 * restart (agent-recovery.md).
 */
import * as fs from "node:fs/promises"
import * as path from "node:path"
import { Effect } from "effect"
import type { ComputeDriverShape, GatewayRef } from "../driver.js"
import { failure, GatewayCodes, namespaceDir } from "./gatewayFailures.js"
import { isOurGateway, readRecord } from "./gatewayProcess.js"
import { agentLayout, isSafeSegment } from "./layout.js"
import { withExportedSpan } from "../../../observability/spans.js"

/** Every `<dataDir>/namespaces/<ns>/agents/<agent>/gateway.json` whose process is ours and alive. */
export const findLiveGateways = (dataDir: string): ComputeDriverShape["liveGateways"] =>
  Effect.tryPromise(async () => {
    const root = path.join(dataDir, "namespaces")
    const found: Array<GatewayRef> = []
    const list = (dir: string) => fs.readdir(dir).catch(() => [] as Array<string>)
    for (const namespaceId of await list(root)) {
      if (!isSafeSegment(namespaceId)) continue
      for (const agentId of await list(path.join(root, namespaceId, "agents"))) {
        if (!isSafeSegment(agentId)) continue
        const layout = agentLayout(namespaceDir(dataDir, namespaceId), agentId)
        const record = await readRecord(layout)
        if (record !== undefined && (await isOurGateway(record.pid, layout))) {
          found.push({ namespaceId: namespaceId as GatewayRef["namespaceId"], agentId, revisionId: record.revisionId })
        }
      }
    }
    return found
  }).pipe(
    Effect.catchAll((cause) =>
      Effect.logWarning("local compute: gateways could not be listed", { cause: String(cause) }).pipe(
        Effect.zipRight(Effect.fail(failure(GatewayCodes.GATEWAY_HOST_FAILURE, "The gateways on this host could not be listed.", false)))
      )
    ),
    withExportedSpan("LocalCompute.liveGateways")
  )
