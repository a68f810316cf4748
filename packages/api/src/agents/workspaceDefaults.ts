/**
 * The workspace defaults identity (SPEC 2.4 `workspaceDefaultsId`, rule 3): the SHA-256 of the
 * canonical JSON of the workspace files this Installation seeds into a new Agent when a create
 * request brings none. A client that composed its request against other defaults (an older
 * release, another Installation) sends an id that no longer matches and gets 409, instead of an
 * Agent whose workspace differs from what its author reviewed.
 *
 * This Installation seeds nothing of its own: the gateway's own first-run files apply, so the
 * defaults are the empty set of files. The id is published on `GET /installation`.
 */
import { createHash } from "node:crypto"
import { Effect } from "effect"

export const WORKSPACE_DEFAULTS: Readonly<Record<string, string>> = {}

const canonical = (files: Readonly<Record<string, string>>) =>
  JSON.stringify(Object.fromEntries(Object.keys(files).sort().map((name) => [name, files[name]])))

export const workspaceDefaultsIdOf = (files: Readonly<Record<string, string>>) =>
  createHash("sha256").update(canonical(files)).digest("hex")

export const currentWorkspaceDefaultsId = Effect.sync(() => workspaceDefaultsIdOf(WORKSPACE_DEFAULTS))
