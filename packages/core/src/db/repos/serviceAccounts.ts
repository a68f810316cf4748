/**
 * The `service_accounts` table and its sealed credential records. Rows are decoded with their
 * schema; the sealed columns are written here and read only by `sealedCredential` (for the
 * worker's delivery), never by the API's reads.
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import type { Statement } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { afterCursor, type PageQuery, pageQuery } from "../pageQuery.js"
import { NamespaceId, SecretId, ServiceAccountId } from "../../schema/ids.js"
import { harnessReferrer } from "./harnessReferrer.js"
import { SealedColumns } from "./secrets.js"
import { deleteWithPolicy } from "./bindings.js"

export const ServiceAccountRow = Schema.Struct({
  id: ServiceAccountId,
  namespace_id: NamespaceId,
  name: Schema.String,
  backend_id: Schema.NullOr(Schema.String),
  upstream_name: Schema.NullOr(Schema.String),
  upstream_account_id: Schema.NullOr(Schema.String),
  state: Schema.Literal("creating", "ready", "deleting"),
  credential_kind: Schema.NullOr(Schema.Literal("api_key", "oauth_access_token", "access_token")),
  credential_secret_id: Schema.NullOr(SecretId),
  credential_secret_key: Schema.NullOr(Schema.String),
  credential_upstream_id: Schema.NullOr(Schema.String),
  credential_issued_at: Schema.NullOr(Schema.DateFromSelf),
  credential_expires_at: Schema.NullOr(Schema.DateFromSelf),
  created_at: Schema.DateFromSelf,
  updated_at: Schema.DateFromSelf
})
export type ServiceAccountRow = typeof ServiceAccountRow.Type

const Key = Schema.Struct({ id: ServiceAccountId, namespace_id: NamespaceId })
const Insert = Schema.Struct({
  id: ServiceAccountId,
  namespace_id: NamespaceId,
  name: Schema.String,
  backend_id: Schema.NullOr(Schema.String),
  upstream_name: Schema.NullOr(Schema.String),
  state: Schema.Literal("creating", "ready")
})
const Linked = Schema.Struct({ id: ServiceAccountId, upstream_account_id: Schema.String })
const NativeReference = Schema.Struct({ id: ServiceAccountId, secret_id: SecretId, secret_key: Schema.String })
const Issued = Schema.Struct({
  id: ServiceAccountId,
  credential_upstream_id: Schema.String,
  expires_at: Schema.NullOr(Schema.DateFromSelf),
  ...SealedColumns.fields
})
/** What the worker delivers to a dedicated harness: the credential's kind and where it is sealed. */
const DeliveredCredential = Schema.Struct({
  credential_kind: Schema.NullOr(Schema.Literal("api_key", "oauth_access_token", "access_token")),
  credential_secret_id: Schema.NullOr(SecretId),
  credential_secret_key: Schema.NullOr(Schema.String),
  key_id: Schema.NullOr(Schema.String),
  nonce: Schema.NullOr(Schema.Uint8ArrayFromSelf),
  ciphertext: Schema.NullOr(Schema.Uint8ArrayFromSelf),
  tag: Schema.NullOr(Schema.Uint8ArrayFromSelf)
})
const Page = Schema.Struct({ namespace_id: NamespaceId, after: Schema.optional(Schema.String), limit: Schema.Int })

export class ServiceAccountsRepo extends Effect.Service<ServiceAccountsRepo>()("@svc/core/ServiceAccountsRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const columns = sql.literal(`a.id, a.namespace_id, a.name, a.backend_id, a.upstream_name, a.upstream_account_id, a.state,
      a.credential_kind, a.credential_secret_id, a.credential_secret_key, a.credential_upstream_id, a.credential_issued_at,
      a.credential_expires_at, a.created_at, a.updated_at`)

    const insert = SqlSchema.single({
      Request: Insert,
      Result: ServiceAccountRow,
      execute: (row) => sql`
        INSERT INTO service_accounts AS a (id, namespace_id, name, backend_id, upstream_name, state)
        VALUES (${row.id}, ${row.namespace_id}, ${row.name}, ${row.backend_id}, ${row.upstream_name}, ${row.state})
        RETURNING ${columns}
      `
    })

    /** The account of a live Namespace. */
    const find = SqlSchema.findOne({
      Request: Key,
      Result: ServiceAccountRow,
      execute: (key) => sql`
        SELECT ${columns} FROM service_accounts a JOIN namespaces n ON n.id = a.namespace_id
        WHERE a.id = ${key.id} AND a.namespace_id = ${key.namespace_id} AND n.status <> 'deleted'
      `
    })

    /** Locks the row FOR UPDATE for the caller's transaction (issuance, reference, deletion). */
    const lock = SqlSchema.findOne({
      Request: Key,
      Result: ServiceAccountRow,
      execute: (key) => sql`
        SELECT ${columns} FROM service_accounts a WHERE a.id = ${key.id} AND a.namespace_id = ${key.namespace_id} FOR UPDATE
      `
    })

    /** Locks the row FOR KEY SHARE: an Agent admitted with it commits before a delete can look. */
    const lockShared = SqlSchema.findOne({
      Request: Key,
      Result: ServiceAccountRow,
      execute: (key) => sql`
        SELECT ${columns} FROM service_accounts a WHERE a.id = ${key.id} AND a.namespace_id = ${key.namespace_id} FOR KEY SHARE
      `
    })

    /**
     * Links a `creating` row to its upstream account; none when a concurrent DELETE has marked
     * it `deleting` or removed it (a `deleting` row must never become `ready` again).
     */
    const link = SqlSchema.findOne({
      Request: Linked,
      Result: ServiceAccountRow,
      execute: (req) => sql`
        UPDATE service_accounts a SET upstream_account_id = ${req.upstream_account_id}, state = 'ready', updated_at = now()
        WHERE a.id = ${req.id} AND a.state = 'creating' RETURNING ${columns}
      `
    })

    const setNativeReference = SqlSchema.single({
      Request: NativeReference,
      Result: ServiceAccountRow,
      execute: (req) => sql`
        UPDATE service_accounts a SET credential_kind = 'api_key', credential_secret_id = ${req.secret_id},
          credential_secret_key = ${req.secret_key}, credential_issued_at = now(), updated_at = now()
        WHERE a.id = ${req.id} RETURNING ${columns}
      `
    })

    const recordIssued = (req: typeof Issued.Type) =>
      Effect.gen(function* () {
        yield* sql`
          INSERT INTO service_account_credentials (service_account_id, driver, key_id, nonce, ciphertext, tag)
          VALUES (${req.id}, ${req.driver}, ${req.key_id}, ${req.nonce}, ${req.ciphertext}, ${req.tag})
        `
        return yield* SqlSchema.single({
          Request: Issued,
          Result: ServiceAccountRow,
          execute: (r) => sql`
            UPDATE service_accounts a SET credential_kind = 'access_token', credential_upstream_id = ${r.credential_upstream_id},
              credential_issued_at = now(), credential_expires_at = ${r.expires_at}, updated_at = now()
            WHERE a.id = ${r.id} RETURNING ${columns}
          `
        })(req)
      })

    const markDeleting = SqlSchema.void({
      Request: ServiceAccountId,
      execute: (id) => sql`UPDATE service_accounts SET state = 'deleting', updated_at = now() WHERE id = ${id}`
    })

    /** The sealed record goes first; the row keeps `credential_upstream_id` NULL from then on. */
    const removeSealedCredential = SqlSchema.void({
      Request: ServiceAccountId,
      execute: (id) => sql`DELETE FROM service_account_credentials WHERE service_account_id = ${id}`
    })

    const forgetUpstreamCredential = SqlSchema.void({
      Request: ServiceAccountId,
      execute: (id) => sql`
        UPDATE service_accounts SET credential_kind = NULL, credential_upstream_id = NULL, credential_issued_at = NULL,
          credential_expires_at = NULL, updated_at = now()
        WHERE id = ${id}
      `
    })

    const remove = SqlSchema.void({
      Request: ServiceAccountId,
      execute: (id) => deleteWithPolicy(sql, "service_account", sql`DELETE FROM service_accounts WHERE id = ${id} RETURNING id, namespace_id`)
    })

    /** What still uses the account, or undefined (SPEC 4.5). */
    const referrer = harnessReferrer(sql, "serviceAccountId")

    /** The Secret a native reference names, locked FOR KEY SHARE for the caller's transaction. */
    const secretByName = SqlSchema.findOne({
      Request: Schema.Struct({ namespace_id: NamespaceId, name: Schema.String }),
      Result: Schema.Struct({ id: SecretId }),
      execute: (req) => sql`
        SELECT id FROM secrets WHERE namespace_id = ${req.namespace_id} AND name = ${req.name} FOR KEY SHARE
      `
    })

    /** The account's credential as sealed (the worker's delivery to a harness only, SPEC 4.5). */
    const sealedCredential = SqlSchema.findOne({
      Request: Key,
      Result: DeliveredCredential,
      execute: (key) => sql`
        SELECT a.credential_kind, a.credential_secret_id, a.credential_secret_key, c.key_id, c.nonce, c.ciphertext, c.tag
        FROM service_accounts a LEFT JOIN service_account_credentials c ON c.service_account_id = a.id
        WHERE a.id = ${key.id} AND a.namespace_id = ${key.namespace_id} AND a.state = 'ready'
      `
    })

    const page = (req: typeof Page.Type, visible: Statement.Fragment): PageQuery<typeof ServiceAccountRow.Type> =>
      pageQuery(ServiceAccountRow, sql`
          SELECT ${columns} FROM service_accounts a
          WHERE a.namespace_id = ${req.namespace_id}
            AND ${afterCursor(sql, "a.id", req.after)}
            AND ${visible}
          ORDER BY a.id
          LIMIT ${req.limit}
        `)

    return {
      insert: (row: typeof Insert.Type) => insert(row).pipe(Effect.orDie),
      find: (key: typeof Key.Type) => find(key).pipe(Effect.orDie),
      lock: (key: typeof Key.Type) => lock(key).pipe(Effect.orDie),
      lockShared: (key: typeof Key.Type) => lockShared(key).pipe(Effect.orDie),
      /** As `lockShared`, keeping the SqlError for a caller that retries on it (a worker's phase). */
      lockSharedRetryable: (key: typeof Key.Type) => lockShared(key).pipe(Effect.catchTag("ParseError", Effect.die)),
      link: (req: typeof Linked.Type) => link(req).pipe(Effect.orDie),
      setNativeReference: (req: typeof NativeReference.Type) => setNativeReference(req).pipe(Effect.orDie),
      recordIssued: (req: typeof Issued.Type) => recordIssued(req).pipe(Effect.orDie),
      markDeleting: (id: ServiceAccountId) => markDeleting(id).pipe(Effect.orDie),
      removeSealedCredential: (id: ServiceAccountId) => removeSealedCredential(id).pipe(Effect.orDie),
      forgetUpstreamCredential: (id: ServiceAccountId) => forgetUpstreamCredential(id).pipe(Effect.orDie),
      remove: (id: ServiceAccountId) => remove(id).pipe(Effect.orDie),
      secretByName: (req: { readonly namespace_id: NamespaceId; readonly name: string }) =>
        secretByName(req).pipe(Effect.map(Option.map((row) => row.id)), Effect.orDie),
      referrer,
      sealedCredential: (key: typeof Key.Type) => sealedCredential(key).pipe(Effect.catchTag("ParseError", Effect.die)),
      page
    }
  })
}) {}
