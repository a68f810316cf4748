/**
 * Presets (DESIGN §7): named templates of Agent launch settings in a Namespace. A template holds
 * Secret references, never Secret values; audit rows carry ids and names only, never a template.
 */
import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import type { PageParams, Preset } from "@svc/core/api"
import { AuditLog } from "@svc/core/audit"
import { type PresetRow, PresetsRepo } from "@svc/core/db"
import { type ErrorDetail, InvalidRequest, jsonPointer, NotFound, ResourceConflict } from "@svc/core/errors"
import { CurrentCaller, visibleTo } from "@svc/core/iam"
import { isTemplated, type PresetTemplate } from "@svc/core/presets"
import { type NamespaceId, PresetId } from "@svc/core/schema"
import { Effect, Option } from "effect"
import { Authorization } from "../auth/authorize.js"
import { GatedPages, inNamespace } from "../auth/gatedPage.js"
import { isUniqueViolation, namespaceRef, pageOf } from "../iam/access.js"
import { NamespaceGuard } from "../namespaces/guard.js"
import { presetRef } from "./policy.js"
import { exportedFn } from "@svc/core/observability"

const toPreset = (row: PresetRow): Preset => ({
  id: row.id,
  namespaceId: row.namespace_id,
  name: row.name,
  template: row.template,
  createdAt: row.created_at,
  updatedAt: row.updated_at
})

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

export class Presets extends Effect.Service<Presets>()("@svc/api/Presets", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* PresetsRepo
    const audit = yield* AuditLog
    const { authorize } = yield* Authorization
    const namespaces = yield* NamespaceGuard
    const pages = yield* GatedPages

    const create = exportedFn("Presets.create")(function* (
      namespaceId: NamespaceId,
      payload: { readonly name: string; readonly template: PresetTemplate }
    ) {
      const caller = yield* CurrentCaller
      yield* authorize("preset:create", namespaceRef(namespaceId))
      yield* namespaces.requireLive(namespaceId)
      yield* checkSecretReferences(namespaceId, payload.template)
      const id = PresetId.make()
      const insert = Effect.gen(function* () {
        yield* namespaces.lockForWrite(namespaceId)
        const row = yield* repo.insert({ id, namespace_id: namespaceId, name: payload.name, template: payload.template })
        yield* audit.record({
          kind: "preset.created",
          outcome: "success",
          actorPrincipalId: caller.principalId,
          namespaceId,
          resource: { kind: "preset", id },
          details: { name: payload.name }
        })
        return toPreset(row)
      })
      return yield* sql.withTransaction(insert).pipe(Effect.catchTag("SqlError", duplicateNameOrDie))
    })

    const list = exportedFn("Presets.list")(function* (namespaceId: NamespaceId, params: PageParams) {
      const caller = yield* CurrentCaller
      const page = pageOf(params)
      const visible = visibleTo(sql, caller, "preset:read", "preset", { id: "p.id", namespaceId: "p.namespace_id" })
      const rows = yield* pages.page({ ...inNamespace(sql, namespaceId), page: repo.page({ namespace_id: namespaceId, after: page.after, limit: page.limit }, visible) })
      return rows.map(toPreset)
    })

    const get = exportedFn("Presets.get")(function* (namespaceId: NamespaceId, presetId: PresetId) {
      yield* authorize("preset:read", presetRef(namespaceId, presetId))
      const row = yield* repo.findLive({ id: presetId, namespace_id: namespaceId })
      return yield* Option.match(row, { onNone: () => Effect.fail(notFound()), onSome: (r) => Effect.succeed(toPreset(r)) })
    })

    const update = exportedFn("Presets.update")(function* (
      namespaceId: NamespaceId,
      presetId: PresetId,
      payload: { readonly name?: string | undefined; readonly template?: PresetTemplate | undefined }
    ) {
      const caller = yield* CurrentCaller
      yield* authorize("preset:update", presetRef(namespaceId, presetId))
      yield* namespaces.requireLive(namespaceId)
      yield* checkSecretReferences(namespaceId, payload.template)
      const write = Effect.gen(function* () {
        const row = yield* repo.update({ id: presetId, namespace_id: namespaceId, name: payload.name, template: payload.template })
        if (Option.isNone(row)) return yield* notFound()
        yield* audit.record({
          kind: "preset.updated",
          outcome: "success",
          actorPrincipalId: caller.principalId,
          namespaceId,
          resource: { kind: "preset", id: presetId },
          details: {
            name: row.value.name,
            changed: [...(payload.name === undefined ? [] : ["name"]), ...(payload.template === undefined ? [] : ["template"])]
          }
        })
        return toPreset(row.value)
      })
      return yield* sql.withTransaction(write).pipe(Effect.catchTag("SqlError", duplicateNameOrDie))
    })

    const remove = exportedFn("Presets.delete")(function* (namespaceId: NamespaceId, presetId: PresetId) {
      const caller = yield* CurrentCaller
      yield* authorize("preset:delete", presetRef(namespaceId, presetId))
      yield* namespaces.requireLive(namespaceId)
      const write = Effect.gen(function* () {
        const name = yield* repo.remove({ id: presetId, namespace_id: namespaceId })
        if (Option.isNone(name)) return yield* notFound()
        yield* audit.record({
          kind: "preset.deleted",
          outcome: "success",
          actorPrincipalId: caller.principalId,
          namespaceId,
          resource: { kind: "preset", id: presetId },
          details: { name: name.value }
        })
      })
      yield* sql.withTransaction(write).pipe(Effect.catchTag("SqlError", Effect.die))
    })

    return { create, list, get, update, delete: remove }
  }),
  dependencies: [PresetsRepo.Default, AuditLog.Default, Authorization.Default, NamespaceGuard.Default, GatedPages.Default]
}) {}
