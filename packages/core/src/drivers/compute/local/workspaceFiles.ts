/**
 * Files in an Agent's workspace directory (`agents.defaults.workspace`, where OpenClaw reads
 * AGENTS.md, SOUL.md, IDENTITY.md and USER.md). A path is a relative path of plain segments;
 * nothing may leave the workspace, and symbolic links are neither followed nor replaced.
 */
import * as fs from "node:fs/promises"
import * as path from "node:path"
import type { GatewayUser } from "./gatewayUser.js"
import { writePrivateFile } from "./layout.js"

const SEGMENT = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/

/** The absolute file for `relative` inside `workspace`, or `undefined` when the path is not acceptable. */
export const workspaceFile = (workspace: string, relative: string): string | undefined => {
  const segments = relative.split("/")
  if (segments.length > 8 || !segments.every((segment) => SEGMENT.test(segment) && !segment.includes(".."))) {
    return undefined
  }
  return path.join(workspace, ...segments)
}

export class WorkspaceFileMissing extends Error {}
export class WorkspaceFileRefused extends Error {}

const refuseLinks = async (workspace: string, file: string): Promise<void> => {
  let current = file
  while (current.length > workspace.length) {
    try {
      if ((await fs.lstat(current)).isSymbolicLink()) throw new WorkspaceFileRefused("symbolic link in the path")
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error
    }
    current = path.dirname(current)
  }
}

export const readWorkspace = async (workspace: string, file: string): Promise<Uint8Array> => {
  await refuseLinks(workspace, file)
  try {
    return new Uint8Array(await fs.readFile(file))
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === "ENOENT") throw new WorkspaceFileMissing("no such file")
    if (code === "EISDIR") throw new WorkspaceFileRefused("a directory")
    throw error
  }
}

/** Writes a workspace file; with an `owner` (the gateway's user) the file and new directories become its. */
export const writeWorkspace = async (workspace: string, file: string, content: Uint8Array, owner?: GatewayUser): Promise<void> => {
  await refuseLinks(workspace, file)
  const created = await fs.mkdir(path.dirname(file), { recursive: true, mode: 0o700 })
  await writePrivateFile(file, content)
  if (owner === undefined) return
  // lchown: never follows a link the gateway may have put in place meanwhile.
  await fs.lchown(file, owner.uid, owner.gid)
  if (created !== undefined) {
    for (let dir = path.dirname(file); dir.length >= created.length && dir.length > workspace.length; dir = path.dirname(dir)) {
      await fs.lchown(dir, owner.uid, owner.gid)
    }
  }
}
