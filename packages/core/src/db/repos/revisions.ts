/**
 * The `agent_revisions` table and the Secrets each revision pins (`agent_revision_secret_refs`),
 * shared by the API (deploy, revision and deployment reads) and the worker (the snapshot a
 * gateway starts from, the failure of a start). A revision is immutable once written, except for
 * `retired_at` and the worker's note of its latest failed start.
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import type { Statement } from "@effect/sql"
import { Effect, Schema } from "effect"
import { afterCursor, type PageQuery, pageQuery } from "../pageQuery.js"
import { AgentId, ConfigurationId, NamespaceId, RevisionId, SecretId } from "../../schema/ids.js"

const ComputeRef = Schema.Struct({ id: Schema.String, implementation: Schema.String })

/**
 * SPEC 2.6: what a `provider_service_account` revision freezes of the account's credential at
 * deploy: its kind and, for a native account's `api_key`, the Secret reference (id and key).
 * Never credential bytes.
 */
export const FrozenCredential = Schema.Struct({
  kind: Schema.Literal("access_token", "api_key"),
  secretRef: Schema.optional(Schema.Struct({ id: SecretId, key: Schema.String }))
})
export type FrozenCredential = typeof FrozenCredential.Type

/**
 * A revision's snapshot as stored. The frozen settings (`harness.auth`, `plugins.plugins`,
 * `pluginApprovers`) are kept as they are: the API decodes each on read like an Agent's, and one
 * that no longer decodes is reported instead of failing the read (SPEC 2.4).
 */
export const RevisionSnapshot = Schema.Struct({
  id: RevisionId,
  agentId: AgentId,
  namespaceId: NamespaceId,
  backendId: Schema.NullOr(Schema.String),
  compute: ComputeRef,
  configuration: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
  configurationGeneration: Schema.Number,
  configurationId: ConfigurationId,
  configurationKind: Schema.Literal("agent"),
  secretBindings: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
  harness: Schema.Struct({
    id: Schema.String,
    mode: Schema.Literal("embedded", "dedicated"),
    auth: Schema.optional(Schema.Unknown),
    /** provider_service_account only; absent from revisions made before it was frozen. */
    credential: Schema.optional(FrozenCredential)
  }),
  plugins: Schema.Struct({ driver: ComputeRef, plugins: Schema.optional(Schema.Unknown) }),
  pluginApprovers: Schema.optional(Schema.Unknown),
  repositoryCredentials: Schema.Array(Schema.Unknown)
})
export type RevisionSnapshot = typeof RevisionSnapshot.Type

export const RevisionRow = Schema.Struct({
  id: RevisionId,
  snapshot: RevisionSnapshot,
  created_at: Schema.DateFromSelf,
  /** The revision whose snapshot this one was made from (rollback, migration 0014); null for a deploy. */
  rolled_back_from: Schema.NullOr(RevisionId)
})
export type RevisionRow = typeof RevisionRow.Type

/** A revision with what its deployment status shows besides its work item (SPEC 2.7). */
export const RevisionStatusRow = Schema.Struct({
  ...RevisionRow.fields,
  error: Schema.NullOr(Schema.Struct({
    code: Schema.String,
    message: Schema.String,
    data: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown }))
  })),
  warnings: Schema.Array(Schema.Struct({ code: Schema.Literal("PLUGIN_INSTALL_FAILED", "PLUGIN_AUTH_REQUIRED"), pluginId: Schema.String })),
  /** The worker's note of the latest failed start (migration 0010); shown only when well-formed. */
  runtime_failure: Schema.Unknown
})
export type RevisionStatusRow = typeof RevisionStatusRow.Type

/** What the worker starts a revision's gateway from: its values and the Secrets it delivers. */
export const GatewaySnapshot = Schema.Struct({
  configuration: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
  secretBindings: Schema.Record({ key: Schema.String, value: Schema.Struct({ source: Schema.Struct({ id: Schema.String }) }) }),
  harness: Schema.Struct({
    auth: Schema.optional(Schema.NullOr(Schema.Struct({
      method: Schema.String,
      source: Schema.optional(Schema.Struct({ id: Schema.String })),
      /** provider_service_account: the account whose credential the harness receives. */
      serviceAccountId: Schema.optional(Schema.String),
      /** credential_source: the source whose key the Credential Gateway's egress injects. */
      sourceId: Schema.optional(Schema.String)
    }))),
    /** The frozen `FrozenCredential`; decoded by the worker, which refuses one that does not. */
    credential: Schema.optional(Schema.Unknown)
  }),
  /** The frozen plugin selection; decoded by the worker, which warns about what it cannot use. */
  plugins: Schema.optional(Schema.Struct({ driver: ComputeRef, plugins: Schema.optional(Schema.Unknown) })),
  /** The frozen repository grants (SPEC 2.6); decoded by the worker, which opens a session per grant. */
  repositoryCredentials: Schema.optional(Schema.Array(Schema.Unknown))
})
export type GatewaySnapshot = typeof GatewaySnapshot.Type

const InsertRevision = Schema.Struct({
  id: RevisionId,
  agent_id: AgentId,
  namespace_id: NamespaceId,
  configuration_id: ConfigurationId,
  configuration_generation: Schema.Number,
  snapshot: RevisionSnapshot,
  rolled_back_from: Schema.NullOr(RevisionId)
})
const RevisionKey = Schema.Struct({ id: RevisionId, agent_id: AgentId, namespace_id: NamespaceId })
const RevisionPage = Schema.Struct({
  agent_id: AgentId,
  namespace_id: NamespaceId,
  after: Schema.optional(Schema.String),
  limit: Schema.Int
})

export class RevisionsRepo extends Effect.Service<RevisionsRepo>()("@svc/core/RevisionsRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    const insertRow = SqlSchema.single({
      Request: InsertRevision,
      Result: RevisionRow,
      execute: (row) => sql`
        INSERT INTO agent_revisions (id, agent_id, namespace_id, configuration_id, configuration_generation, snapshot, rolled_back_from)
        VALUES (${row.id}, ${row.agent_id}, ${row.namespace_id}, ${row.configuration_id}, ${row.configuration_generation},
          ${JSON.stringify(row.snapshot)}::jsonb, ${row.rolled_back_from})
        RETURNING id, snapshot, created_at, rolled_back_from
      `
    })

    /** The revision and the Secrets it delivers, pinned by foreign keys. Call inside a transaction. */
    const insert = (row: typeof InsertRevision.Type, secretIds: ReadonlyArray<string>) =>
      Effect.gen(function* () {
        const inserted = yield* insertRow(row)
        if (secretIds.length > 0) {
          yield* sql`INSERT INTO agent_revision_secret_refs ${sql.insert(secretIds.map((secretId) => ({ revision_id: row.id, secret_id: secretId })))}`
        }
        return inserted
      })

    /** The Agent's revision under its live Namespace. */
    const findLive = SqlSchema.findOne({
      Request: RevisionKey,
      Result: RevisionStatusRow,
      execute: (key) => sql`
        SELECT r.id, r.snapshot, r.created_at, r.rolled_back_from, r.error, r.warnings, r.runtime_failure
        FROM agent_revisions r JOIN namespaces n ON n.id = r.namespace_id
        WHERE r.id = ${key.id} AND r.agent_id = ${key.agent_id} AND r.namespace_id = ${key.namespace_id} AND n.status <> 'deleted'
      `
    })

    /** One keyset page of an Agent's revisions, filtered by `visible` (over `r.id` / `r.namespace_id`). */
    const page = (req: typeof RevisionPage.Type, visible: Statement.Fragment): PageQuery<typeof RevisionRow.Type> =>
      pageQuery(RevisionRow, sql`
          SELECT r.id, r.snapshot, r.created_at, r.rolled_back_from FROM agent_revisions r
          WHERE r.agent_id = ${req.agent_id} AND r.namespace_id = ${req.namespace_id}
            AND ${afterCursor(sql, "r.id", req.after)}
            AND ${visible}
          ORDER BY r.id
          LIMIT ${req.limit}
        `)

    /** The revision's gateway snapshot; none when the revision is gone (its Agent was removed). */
    const gatewaySnapshot = SqlSchema.findOne({
      Request: RevisionId,
      Result: Schema.Struct({ snapshot: GatewaySnapshot }),
      execute: (id) => sql`SELECT snapshot FROM agent_revisions WHERE id = ${id}`
    })

    /** Notes which check the revision's latest failed start stopped at (SPEC 2.7 `runtimeFailure`). */
    const recordRuntimeFailure = SqlSchema.void({
      Request: Schema.Struct({ id: RevisionId, runtime_failure: Schema.Unknown }),
      execute: (req) => sql`
        UPDATE agent_revisions SET runtime_failure = ${JSON.stringify(req.runtime_failure)}::jsonb WHERE id = ${req.id}
      `
    })

    /** The warnings of the revision's deployment (SPEC 2.7), replacing any of an earlier attempt. */
    const recordWarnings = SqlSchema.void({
      Request: Schema.Struct({ id: RevisionId, warnings: Schema.Unknown }),
      execute: (req) => sql`UPDATE agent_revisions SET warnings = ${JSON.stringify(req.warnings)}::jsonb WHERE id = ${req.id}`
    })

    return {
      recordWarnings: (id: RevisionId, warnings: ReadonlyArray<{ readonly code: string; readonly pluginId: string }>) => recordWarnings({ id, warnings }),
      insert: (row: typeof InsertRevision.Type, secretIds: ReadonlyArray<string>) => insert(row, secretIds).pipe(Effect.orDie),
      findLive: (key: typeof RevisionKey.Type) => findLive(key).pipe(Effect.orDie),
      page,
      /** The worker keeps the SqlError: a lost database is a retryable work failure there. */
      gatewaySnapshot: (id: RevisionId) =>
        gatewaySnapshot(id).pipe(Effect.map((row) => (row._tag === "Some" ? row.value.snapshot : undefined)), Effect.catchTag("ParseError", Effect.die)),
      recordRuntimeFailure: (id: RevisionId, runtimeFailure: unknown) => recordRuntimeFailure({ id, runtime_failure: runtimeFailure })
    }
  })
}) {}
