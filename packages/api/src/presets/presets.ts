/**
 * Presets (DESIGN §7): named templates of Agent launch settings in a Namespace. A template holds
 * Secret references, never Secret values; audit rows carry ids and names only, never a template.
 */
import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { recordAudit } from "@svc/core/audit"
import { type ErrorDetail, InvalidRequest, jsonPointer, NotFound, ResourceConflict } from "@svc/core/errors"
import { CurrentCaller, visibleTo } from "@svc/core/iam"
import { isTemplated, type PresetTemplate } from "@svc/core/presets"
import { type NamespaceId, PresetId } from "@svc/core/schema"
import { Effect } from "effect"
import { authorize } from "../auth/authorize.js"
import { isUniqueViolation, namespaceRef, type Page, requireNamespace } from "../iam/access.js"
import { lockNamespaceForWrite } from "../namespaces/children.js"
import type { Preset } from "@svc/core/api"

interface PresetRow {
  readonly id: string
  readonly namespace_id: string
  readonly name: string
  readonly template: Preset["template"]
  readonly created_at: Date
  readonly updated_at: Date
}

const COLUMNS = "id, namespace_id, name, template, created_at, updated_at"

const toPreset = (row: PresetRow): Preset => ({
  id: row.id as Preset["id"],
  namespaceId: row.namespace_id as NamespaceId,
  name: row.name,
  template: row.template,
  createdAt: row.created_at,
  updatedAt: row.updated_at
})

export const presetRef = (namespaceId: string, presetId: string) =>
  ({ kind: "preset", id: presetId, namespaceId }) as const

const notFound = () => new NotFound({ message: "The Preset does not exist." })
const nameTaken = () => new ResourceConflict({ message: "A Preset with this name already exists in the Namespace." })

/**
 * SPEC 2.5: a Secret reference names a Secret of the same Namespace. A reference whose
 * `namespaceId` is a placeholder is checked when the Preset is applied.
 */
const foreignSecretReferences = (namespaceId: string, template: PresetTemplate): Array<ErrorDetail> => {
  const sources: Array<[ReadonlyArray<string>, { readonly namespaceId: string }]> = []
  const harnessAuth = template.agent?.harnessAuth
  if (harnessAuth != null && "source" in harnessAuth) sources.push([["agent", "harnessAuth", "source"], harnessAuth.source])
  for (const [name, binding] of Object.entries(template.configuration?.secretBindings ?? {})) {
    sources.push([["configuration", "secretBindings", name, "source"], binding.source])
  }
  return sources
    .filter(([, source]) => !isTemplated(source.namespaceId) && source.namespaceId !== namespaceId)
    .map(([path]) => ({ code: "INVALID_VALUE", path: jsonPointer(["template", ...path, "namespaceId"]) }))
}

const checkSecretReferences = (namespaceId: string, template: PresetTemplate | undefined) => {
  const details = template === undefined ? [] : foreignSecretReferences(namespaceId, template)
  return details.length === 0
    ? Effect.void
    : Effect.fail(new InvalidRequest({ message: "A Secret reference must name a Secret of the Preset's Namespace.", details }))
}

const duplicateNameOrDie = (error: SqlError) => (isUniqueViolation(error) ? Effect.fail(nameTaken()) : Effect.die(error))

export const createPreset = Effect.fn("Presets.create")(function* (
  namespaceId: string,
  payload: { readonly name: string; readonly template: PresetTemplate }
) {
  const caller = yield* CurrentCaller
  yield* authorize("preset:create", namespaceRef(namespaceId))
  yield* requireNamespace(namespaceId)
  yield* checkSecretReferences(namespaceId, payload.template)
  const sql = yield* SqlClient.SqlClient
  const id = PresetId.make()
  const insert = Effect.gen(function* () {
    yield* lockNamespaceForWrite(namespaceId)
    const rows = yield* sql<PresetRow>`
      INSERT INTO presets (id, namespace_id, name, template)
      VALUES (${id}, ${namespaceId}, ${payload.name}, ${JSON.stringify(payload.template)}::jsonb)
      RETURNING ${sql.unsafe(COLUMNS)}
    `
    yield* recordAudit({
      kind: "preset.created",
      outcome: "success",
      actorPrincipalId: caller.principalId,
      namespaceId,
      resource: { kind: "preset", id },
      details: { name: payload.name }
    })
    return toPreset(rows[0]!)
  })
  return yield* sql.withTransaction(insert).pipe(Effect.catchTag("SqlError", duplicateNameOrDie))
})

export const listPresets = Effect.fn("Presets.list")(function* (namespaceId: string, page: Page) {
  const caller = yield* CurrentCaller
  yield* authorize("namespace:read", namespaceRef(namespaceId))
  yield* requireNamespace(namespaceId)
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql<PresetRow>`
    SELECT p.id, p.namespace_id, p.name, p.template, p.created_at, p.updated_at
    FROM presets p
    WHERE p.namespace_id = ${namespaceId}
      AND ${page.after === undefined ? sql`TRUE` : sql`p.id > ${page.after}`}
      AND ${visibleTo(sql, caller, "preset:read", "preset", { id: "p.id", namespaceId: "p.namespace_id" })}
    ORDER BY p.id
    LIMIT ${page.limit}
  `.pipe(Effect.orDie)
  return rows.map(toPreset)
})

export const getPreset = Effect.fn("Presets.get")(function* (namespaceId: string, presetId: string) {
  yield* authorize("preset:read", presetRef(namespaceId, presetId))
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql<PresetRow>`
    SELECT p.id, p.namespace_id, p.name, p.template, p.created_at, p.updated_at
    FROM presets p JOIN namespaces n ON n.id = p.namespace_id
    WHERE p.id = ${presetId} AND p.namespace_id = ${namespaceId} AND n.status <> 'deleted'
  `.pipe(Effect.orDie)
  if (rows[0] === undefined) return yield* notFound()
  return toPreset(rows[0])
})

export const updatePreset = Effect.fn("Presets.update")(function* (
  namespaceId: string,
  presetId: string,
  payload: { readonly name?: string | undefined; readonly template?: PresetTemplate | undefined }
) {
  const caller = yield* CurrentCaller
  yield* authorize("preset:update", presetRef(namespaceId, presetId))
  yield* requireNamespace(namespaceId)
  yield* checkSecretReferences(namespaceId, payload.template)
  const sql = yield* SqlClient.SqlClient
  const template = payload.template === undefined ? null : JSON.stringify(payload.template)
  const update = Effect.gen(function* () {
    const rows = yield* sql<PresetRow>`
      UPDATE presets
      SET name = COALESCE(${payload.name ?? null}, name),
        template = COALESCE(${template}::jsonb, template),
        updated_at = now()
      WHERE id = ${presetId} AND namespace_id = ${namespaceId}
      RETURNING ${sql.unsafe(COLUMNS)}
    `
    const row = rows[0]
    if (row === undefined) return yield* notFound()
    yield* recordAudit({
      kind: "preset.updated",
      outcome: "success",
      actorPrincipalId: caller.principalId,
      namespaceId,
      resource: { kind: "preset", id: presetId },
      details: {
        name: row.name,
        changed: [...(payload.name === undefined ? [] : ["name"]), ...(payload.template === undefined ? [] : ["template"])]
      }
    })
    return toPreset(row)
  })
  return yield* sql.withTransaction(update).pipe(Effect.catchTag("SqlError", duplicateNameOrDie))
})

export const deletePreset = Effect.fn("Presets.delete")(function* (namespaceId: string, presetId: string) {
  const caller = yield* CurrentCaller
  yield* authorize("preset:delete", presetRef(namespaceId, presetId))
  yield* requireNamespace(namespaceId)
  const sql = yield* SqlClient.SqlClient
  const remove = Effect.gen(function* () {
    const rows = yield* sql<{ name: string }>`
      DELETE FROM presets WHERE id = ${presetId} AND namespace_id = ${namespaceId} RETURNING name
    `
    const row = rows[0]
    if (row === undefined) return yield* notFound()
    yield* recordAudit({
      kind: "preset.deleted",
      outcome: "success",
      actorPrincipalId: caller.principalId,
      namespaceId,
      resource: { kind: "preset", id: presetId },
      details: { name: row.name }
    })
  })
  yield* sql.withTransaction(remove).pipe(Effect.catchTag("SqlError", Effect.die))
})
