/**
 * Credential sources (SPEC 2.10, 3, 4.6; DESIGN §13): model credentials registered with the
 * Credential Gateway, which injects them on egress. A source is recorded `registering` before
 * the gateway call; the gateway's acceptance makes it `ready`, its refusal removes it, and a call
 * without an answer leaves it `deleting` for the worker's sweep to remove from the gateway.
 * Secret values are revealed only to be handed to the gateway; responses and audit rows carry
 * ids, names and field names only.
 */
import { SqlClient } from "@effect/sql"
import type { CreateCredentialSource, CredentialSource, CredentialSourceStatus, PageParams } from "@svc/core/api"
import { AuditLog } from "@svc/core/audit"
import { type CredentialSourceRow, CredentialSourcesRepo, SecretsRepo } from "@svc/core/db"
import { CredentialGateway } from "@svc/core/drivers/credentialGateway"
import { SecretDriver } from "@svc/core/drivers/secret"
import { DependencyUnavailable, NamespaceNotReady, NotFound, ResourceConflict } from "@svc/core/errors"
import { CurrentCaller, visibleTo } from "@svc/core/iam"
import { CredentialSourceId, type NamespaceId, type SecretId } from "@svc/core/schema"
import { Effect, Option } from "effect"
import { Authorization } from "../auth/authorize.js"
import { GatedPages, inNamespace } from "../auth/gatedPage.js"
import { namespaceRef, pageOf } from "../iam/access.js"
import { NamespaceGuard } from "../namespaces/guard.js"
import { secretRef } from "../secrets/policy.js"
import { admitCatalog } from "./catalog.js"
import { credentialSourceRef } from "./policy.js"
import { liveStatus } from "./status.js"
import { revealSourceSecrets } from "./values.js"
import { exportedFn } from "@svc/core/observability"

export const toCredentialSource = (row: CredentialSourceRow, status?: CredentialSourceStatus): CredentialSource => ({
  id: row.id,
  namespaceId: row.namespace_id,
  name: row.name,
  type: row.type,
  config: row.config,
  secrets: Object.fromEntries(
    Object.entries(row.secrets).map(([field, id]) => [field, { kind: "secret" as const, namespaceId: row.namespace_id, id }])
  ),
  ref: { kind: "credential_source", namespaceId: row.namespace_id, id: row.id },
  state: row.state,
  ...(status === undefined ? {} : { status }),
  createdAt: row.created_at
})

const notFound = () => new NotFound({ message: "The credential source does not exist." })
const noGateway = () => new DependencyUnavailable({ message: "No Credential Gateway is selected." })

export class CredentialSources extends Effect.Service<CredentialSources>()("@svc/api/CredentialSources", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* CredentialSourcesRepo
    const secretsRepo = yield* SecretsRepo
    const audit = yield* AuditLog
    const { authorize } = yield* Authorization
    const namespaces = yield* NamespaceGuard
    const pages = yield* GatedPages
    const { client } = yield* CredentialGateway
    const secretDriver = yield* SecretDriver

    const create = exportedFn("CredentialSources.create")(function* (namespaceId: NamespaceId, payload: CreateCredentialSource) {
      const caller = yield* CurrentCaller
      yield* admitCatalog(payload)
      yield* authorize("credential_source:create", namespaceRef(namespaceId))
      yield* namespaces.requireLive(namespaceId)
      const fields = Object.entries(payload.secrets ?? {}).map(([field, ref]) => [field, ref] as const)
      for (const [, ref] of fields) {
        if (ref.namespaceId !== namespaceId) return yield* new NotFound({ message: "A referenced Secret does not exist in this Namespace." })
        yield* authorize("secret:operate", secretRef(namespaceId, ref.id))
      }
      if (client === undefined) return yield* noGateway()
      const id = CredentialSourceId.make()
      const record = Effect.gen(function* () {
        // SPEC 4.6, 7.4: a Namespace that is not `ready` (a `deleting` one too) is 409 NAMESPACE_NOT_READY.
        const namespace = yield* namespaces.lockForWrite(namespaceId).pipe(Effect.catchTag("ResourceConflict", () => Effect.succeed(undefined)))
        if (namespace?.status !== "ready") return yield* new NamespaceNotReady({ message: "The Namespace is not ready." })
        const values = yield* revealSourceSecrets(namespaceId, fields.map(([field, ref]) => [field, ref.id as SecretId] as const))
        yield* repo.insert({
          id,
          namespace_id: namespaceId,
          name: payload.name,
          type: payload.type,
          config: JSON.stringify(payload.config ?? {}),
          fields: fields.map(([field]) => field),
          secret_ids: fields.map(([, ref]) => ref.id)
        })
        yield* audit.record({
          kind: "credential_source.created",
          outcome: "success",
          actorPrincipalId: caller.principalId,
          namespaceId,
          resource: { kind: "credential_source", id },
          details: { name: payload.name, type: payload.type, secretFields: fields.map(([field]) => field) }
        })
        return values
      })
      const values = yield* sql.withTransaction(record).pipe(
        Effect.catchTag("SqlError", Effect.die),
        Effect.provideService(SecretsRepo, secretsRepo),
        Effect.provideService(SecretDriver, secretDriver)
      )
      const key = { id, namespace_id: namespaceId }
      const registered = yield* Effect.either(client.register({
        name: id,
        type: payload.type,
        labels: { "svc.credential-source": id, "svc.namespace": namespaceId },
        config: payload.config ?? {},
        credentials: values
      }))
      if (registered._tag === "Right" && (yield* repo.transition({ id, from: ["registering"], to: "ready" }))) {
        // A concurrent DELETE may already have taken it.
        const row = yield* repo.find(key)
        if (Option.isNone(row)) return yield* notFound()
        return toCredentialSource(row.value, { state: "ready" })
      }
      const outcome = registered._tag === "Left" ? registered.left.outcome : "superseded"
      yield* audit.record({
        kind: "credential_source.registration_failed",
        outcome: "failure",
        actorPrincipalId: caller.principalId,
        namespaceId,
        resource: { kind: "credential_source", id },
        details: { gateway: outcome }
      }).pipe(Effect.catchTag("SqlError", Effect.die))
      if (registered._tag === "Left" && registered.left.outcome === "rejected") {
        yield* repo.removeUnsettled({ id, state: "registering" })
        return yield* new DependencyUnavailable({ message: "The Credential Gateway refused the credential source; it was not kept." })
      }
      // No answer (or the sweep timed the registration out first): a copy may exist at the
      // gateway, so the source is removed from there before it goes from here.
      if (!(yield* repo.transition({ id, from: ["registering"], to: "deleting" }))) {
        // A DELETE took the source while the registration was on its way: its removal may have
        // come first, and no record is left for the sweep to go by. Best effort: a failure is logged.
        yield* client.remove(id).pipe(
          Effect.catchAll((failure) => Effect.logWarning("credential sources: a superseded registration's copy may remain", { sourceId: id, outcome: failure.outcome }))
        )
      }
      return yield* new DependencyUnavailable({ message: "The Credential Gateway did not answer; the credential source is being removed." })
    })

    const list = exportedFn("CredentialSources.list")(function* (namespaceId: NamespaceId, params: PageParams) {
      const caller = yield* CurrentCaller
      const page = pageOf(params)
      const visible = visibleTo(sql, caller, "credential_source:read", "credential_source", { id: "c.id", namespaceId: "c.namespace_id" })
      const rows = yield* pages.page({ ...inNamespace(sql, namespaceId), page: repo.page({ namespace_id: namespaceId, after: page.after, limit: page.limit }, visible) })
      return rows.map((row) => toCredentialSource(row))
    })

    const get = exportedFn("CredentialSources.get")(function* (namespaceId: NamespaceId, sourceId: CredentialSourceId) {
      yield* authorize("credential_source:read", credentialSourceRef(namespaceId, sourceId))
      const row = yield* repo.find({ id: sourceId, namespace_id: namespaceId })
      if (Option.isNone(row)) return yield* notFound()
      return toCredentialSource(row.value, yield* liveStatus(client, sourceId, row.value.state))
    })

    const remove = exportedFn("CredentialSources.delete")(function* (namespaceId: NamespaceId, sourceId: CredentialSourceId) {
      const caller = yield* CurrentCaller
      yield* authorize("credential_source:delete", credentialSourceRef(namespaceId, sourceId))
      yield* namespaces.requireLive(namespaceId)
      const key = { id: sourceId, namespace_id: namespaceId }
      const mark = Effect.gen(function* () {
        const row = yield* repo.lockForUpdate(key)
        if (Option.isNone(row)) return yield* notFound()
        const referrer = yield* repo.referrer(key)
        if (referrer !== undefined) {
          return yield* new ResourceConflict({ message: `The credential source is bound by ${referrer}; rebind it first.` })
        }
        yield* repo.transition({ id: sourceId, from: ["registering", "ready"], to: "deleting" })
        yield* audit.record({
          kind: "credential_source.deleted",
          outcome: "success",
          actorPrincipalId: caller.principalId,
          namespaceId,
          resource: { kind: "credential_source", id: sourceId },
          details: { name: row.value.name }
        })
      })
      yield* sql.withTransaction(mark).pipe(Effect.catchTag("SqlError", Effect.die))
      if (client === undefined) return yield* noGateway()
      yield* client.remove(sourceId).pipe(
        Effect.mapError(() =>
          new DependencyUnavailable({ message: "The Credential Gateway did not confirm the removal; the credential source stays deleting." })
        )
      )
      // The sweep may have removed it meanwhile: gone either way.
      yield* repo.removeUnsettled({ id: sourceId, state: "deleting" })
    })

    return { create, list, get, delete: remove }
  }),
  dependencies: [
    CredentialSourcesRepo.Default,
    SecretsRepo.Default,
    AuditLog.Default,
    Authorization.Default,
    NamespaceGuard.Default,
    GatedPages.Default
  ]
}) {}
