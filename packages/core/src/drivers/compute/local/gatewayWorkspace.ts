/**
 * Workspace files of an Agent's gateway on this host (SPEC 4.4): read and written in place under
 * the Agent's workspace, owned by the Agent's user when gateways run as per-Agent users.
 */
import * as fs from "node:fs/promises"
import { Effect } from "effect"
import type { ComputeDriverShape, ComputeFailure, GatewayRef } from "../driver.js"
import { failure, GatewayCodes, hostFailure } from "./gatewayFailures.js"
import type { GatewayUser } from "./gatewayUser.js"
import type { AgentLayout } from "./layout.js"
import { readWorkspace, WorkspaceFileMissing, WorkspaceFileRefused, workspaceFile, writeWorkspace } from "./workspaceFiles.js"

type WorkspaceAccess = Pick<ComputeDriverShape, "readWorkspaceFile" | "writeWorkspaceFile">

export const makeWorkspaceAccess = (
  layoutOf: (ref: GatewayRef) => Effect.Effect<AgentLayout, ComputeFailure>,
  ownerOf: (layout: AgentLayout) => Promise<GatewayUser | undefined>
): WorkspaceAccess => {
  const fileOf = (ref: GatewayRef, relative: string) =>
    Effect.gen(function* () {
      const layout = yield* layoutOf(ref)
      const file = workspaceFile(layout.workspace, relative)
      if (file === undefined) {
        return yield* failure(GatewayCodes.WORKSPACE_PATH_INVALID, "The workspace file name is not acceptable.", true)
      }
      const prepared = yield* Effect.promise(() => fs.stat(layout.workspace).then(() => true, () => false))
      if (!prepared) return yield* failure(GatewayCodes.GATEWAY_NOT_RUNNING, "The Agent has no gateway on this host.", false)
      return { layout, file }
    })

  const workspaceFailure = (operation: string, ref: GatewayRef) => (cause: unknown) =>
    cause instanceof WorkspaceFileMissing
      ? Effect.fail(failure(GatewayCodes.WORKSPACE_FILE_NOT_FOUND, "The workspace file does not exist.", true))
      : cause instanceof WorkspaceFileRefused
      ? Effect.fail(failure(GatewayCodes.WORKSPACE_PATH_INVALID, "The workspace file name is not acceptable.", true))
      : hostFailure(operation, ref)(cause)

  const readWorkspaceFile: WorkspaceAccess["readWorkspaceFile"] = (ref, relative) =>
    fileOf(ref, relative).pipe(
      Effect.flatMap(({ file, layout }) =>
        Effect.tryPromise({ try: () => readWorkspace(layout.workspace, file), catch: (cause) => cause }).pipe(
          Effect.catchAll(workspaceFailure("read-workspace", ref))
        )
      )
    )

  const writeWorkspaceFile: WorkspaceAccess["writeWorkspaceFile"] = (ref, relative, content) =>
    fileOf(ref, relative).pipe(
      Effect.flatMap(({ file, layout }) =>
        Effect.tryPromise({
          try: async () => writeWorkspace(layout.workspace, file, content, await ownerOf(layout)),
          catch: (cause) => cause
        }).pipe(
          Effect.catchAll(workspaceFailure("write-workspace", ref))
        )
      )
    )

  return { readWorkspaceFile, writeWorkspaceFile }
}
