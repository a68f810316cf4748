/**
 * Secrets (DESIGN §7): named, write-only values of a Namespace. The value is sealed by the
 * Secret Driver inside the request and never leaves it: no response, log line, audit row or
 * error carries it (the handlers only ever hold it Redacted).
 */
import { SqlClient } from "@effect/sql"
import { recordAudit } from "@svc/core/audit"
import { NotFound, ResourceConflict } from "@svc/core/errors"
import { SecretDriver } from "@svc/core/drivers/secret"
import { CurrentCaller, visibleTo } from "@svc/core/iam"
import { type NamespaceId, SecretId } from "@svc/core/schema"
import { Effect, Redacted } from "effect"
import { authorize } from "../auth/authorize.js"
import { isUniqueViolation, namespaceRef, type Page, requireNamespace } from "../iam/access.js"
import { lockNamespaceForWrite } from "../namespaces/children.js"
import type { Secret } from "@svc/core/api"

interface SecretRow {
  readonly id: string
  readonly namespace_id: string
  readonly name: string
  readonly created_at: Date
  readonly updated_at: Date
}

const COLUMNS = "id, namespace_id, name, created_at, updated_at"

const toSecret = (row: SecretRow): Secret => ({
  id: row.id as Secret["id"],
  namespaceId: row.namespace_id as NamespaceId,
  name: row.name,
  ref: { kind: "secret", namespaceId: row.namespace_id as NamespaceId, id: row.id as Secret["id"] },
  createdAt: row.created_at,
  updatedAt: row.updated_at
})

export const secretRef = (namespaceId: string, secretId: string) =>
  ({ kind: "secret", id: secretId, namespaceId }) as const

const notFound = () => new NotFound({ message: "The Secret does not exist." })

/**
 * What still references the Secret, or undefined when nothing does (DELETE answers 409 while
 * something does). Runs inside the deleting transaction after the row lock. Referrers, each also
 * guarded by a foreign key: Configurations' `secretBindings`, Agents' `harnessAuth` drafts and
 * revisions (which deliver the Secret whenever their gateway starts). Credential sources and
 * service accounts add their queries here as they land.
 * Presets are not referrers: their references are checked when a Preset is applied
 * (docs/decisions/presets.md).
 */
export const secretReferrer = (
  namespaceId: string,
  secretId: string
): Effect.Effect<string | undefined, never, SqlClient.SqlClient> =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ referrer: string }>`
      SELECT 'Configuration ' || r.configuration_id AS referrer FROM configuration_secret_refs r
        JOIN configurations c ON c.id = r.configuration_id
        WHERE r.secret_id = ${secretId} AND c.namespace_id = ${namespaceId}
      UNION ALL
      SELECT 'Agent ' || r.agent_id FROM agent_secret_refs r JOIN agents a ON a.id = r.agent_id
        WHERE r.secret_id = ${secretId} AND a.namespace_id = ${namespaceId}
      UNION ALL
      SELECT 'revision ' || r.revision_id FROM agent_revision_secret_refs r JOIN agent_revisions v ON v.id = r.revision_id
        WHERE r.secret_id = ${secretId} AND v.namespace_id = ${namespaceId}
      LIMIT 1
    `.pipe(Effect.orDie)
    return rows[0]?.referrer
  })

export const createSecret = Effect.fn("Secrets.create")(function* (
  namespaceId: string,
  payload: { readonly name: string; readonly value: string }
) {
  const caller = yield* CurrentCaller
  yield* authorize("secret:create", namespaceRef(namespaceId))
  const driver = yield* SecretDriver
  const sealed = yield* driver.seal(Redacted.make(payload.value))
  const sql = yield* SqlClient.SqlClient
  const id = SecretId.make()
  const insert = Effect.gen(function* () {
    yield* lockNamespaceForWrite(namespaceId)
    const rows = yield* sql<SecretRow>`
      INSERT INTO secrets (id, namespace_id, name, driver, key_id, nonce, ciphertext, tag)
      VALUES (${id}, ${namespaceId}, ${payload.name}, ${driver.name}, ${sealed.keyId},
        ${sealed.nonce}, ${sealed.ciphertext}, ${sealed.tag})
      RETURNING ${sql.unsafe(COLUMNS)}
    `
    yield* recordAudit({
      kind: "secret.created",
      outcome: "success",
      actorPrincipalId: caller.principalId,
      namespaceId,
      resource: { kind: "secret", id },
      details: { name: payload.name, keyId: sealed.keyId }
    })
    return toSecret(rows[0]!)
  })
  return yield* sql.withTransaction(insert).pipe(
    Effect.catchTag("SqlError", (error) =>
      isUniqueViolation(error)
        ? Effect.fail(new ResourceConflict({ message: "A Secret with this name already exists in the Namespace." }))
        : Effect.die(error)
    )
  )
})

export const listSecrets = Effect.fn("Secrets.list")(function* (namespaceId: string, page: Page) {
  const caller = yield* CurrentCaller
  yield* authorize("namespace:read", namespaceRef(namespaceId))
  yield* requireNamespace(namespaceId)
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql<SecretRow>`
    SELECT s.id, s.namespace_id, s.name, s.created_at, s.updated_at
    FROM secrets s
    WHERE s.namespace_id = ${namespaceId}
      AND ${page.after === undefined ? sql`TRUE` : sql`s.id > ${page.after}`}
      AND ${visibleTo(sql, caller, "secret:read", "secret", { id: "s.id", namespaceId: "s.namespace_id" })}
    ORDER BY s.id
    LIMIT ${page.limit}
  `.pipe(Effect.orDie)
  return rows.map(toSecret)
})

export const getSecret = Effect.fn("Secrets.get")(function* (namespaceId: string, secretId: string) {
  yield* authorize("secret:read", secretRef(namespaceId, secretId))
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql<SecretRow>`
    SELECT s.id, s.namespace_id, s.name, s.created_at, s.updated_at
    FROM secrets s JOIN namespaces n ON n.id = s.namespace_id
    WHERE s.id = ${secretId} AND s.namespace_id = ${namespaceId} AND n.status <> 'deleted'
  `.pipe(Effect.orDie)
  if (rows[0] === undefined) return yield* notFound()
  return toSecret(rows[0])
})

export const updateSecret = Effect.fn("Secrets.update")(function* (
  namespaceId: string,
  secretId: string,
  payload: { readonly value: string }
) {
  const caller = yield* CurrentCaller
  yield* authorize("secret:update", secretRef(namespaceId, secretId))
  yield* requireNamespace(namespaceId)
  const driver = yield* SecretDriver
  const sealed = yield* driver.seal(Redacted.make(payload.value))
  const sql = yield* SqlClient.SqlClient
  const update = Effect.gen(function* () {
    const rows = yield* sql<SecretRow>`
      UPDATE secrets
      SET driver = ${driver.name}, key_id = ${sealed.keyId}, nonce = ${sealed.nonce},
        ciphertext = ${sealed.ciphertext}, tag = ${sealed.tag}, updated_at = now()
      WHERE id = ${secretId} AND namespace_id = ${namespaceId}
      RETURNING ${sql.unsafe(COLUMNS)}
    `
    const row = rows[0]
    if (row === undefined) return yield* notFound()
    yield* recordAudit({
      kind: "secret.updated",
      outcome: "success",
      actorPrincipalId: caller.principalId,
      namespaceId,
      resource: { kind: "secret", id: secretId },
      details: { keyId: sealed.keyId }
    })
    return toSecret(row)
  })
  return yield* sql.withTransaction(update).pipe(Effect.catchTag("SqlError", Effect.die))
})

export const deleteSecret = Effect.fn("Secrets.delete")(function* (namespaceId: string, secretId: string) {
  const caller = yield* CurrentCaller
  yield* authorize("secret:delete", secretRef(namespaceId, secretId))
  yield* requireNamespace(namespaceId)
  const sql = yield* SqlClient.SqlClient
  const remove = Effect.gen(function* () {
    // The row lock orders this delete against a referrer being written concurrently.
    const rows = yield* sql<{ name: string }>`
      SELECT name FROM secrets WHERE id = ${secretId} AND namespace_id = ${namespaceId} FOR UPDATE
    `
    const row = rows[0]
    if (row === undefined) return yield* notFound()
    const referrer = yield* secretReferrer(namespaceId, secretId)
    if (referrer !== undefined) {
      return yield* new ResourceConflict({ message: `The Secret is referenced by ${referrer}; remove the reference first.` })
    }
    yield* sql`DELETE FROM secrets WHERE id = ${secretId}`
    yield* recordAudit({
      kind: "secret.deleted",
      outcome: "success",
      actorPrincipalId: caller.principalId,
      namespaceId,
      resource: { kind: "secret", id: secretId },
      details: { name: row.name }
    })
  })
  yield* sql.withTransaction(remove).pipe(Effect.catchTag("SqlError", Effect.die))
})
