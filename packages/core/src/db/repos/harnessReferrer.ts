/**
 * What still uses a harness credential (a service account or a credential source), or
 * undefined: an Agent draft, an Agent's active revision, or a revision whose deployment is queued
 * or claimed (SPEC 4.5, 4.6). A superseded revision does not count: SPEC 4.6's replacement is
 * "register a new source, rebind and redeploy Agents, then delete the old one".
 */
import type { SqlClient } from "@effect/sql"
import { SqlSchema } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { AGENT_DEPLOY } from "../../tenancy/agents.js"

/** The `harnessAuth` field that names the credential. */
export type HarnessReference = "serviceAccountId" | "sourceId"

export const harnessReferrer = (sql: SqlClient.SqlClient, field: HarnessReference) =>
  (key: { readonly id: string; readonly namespace_id: string }) =>
    SqlSchema.findOne({
      Request: Schema.Struct({ id: Schema.String, namespace_id: Schema.String }),
      Result: Schema.Struct({ referrer: Schema.String }),
      execute: (k) => sql`
        SELECT 'Agent ' || a.id AS referrer FROM agents a
          WHERE a.namespace_id = ${k.namespace_id} AND a.settings -> 'harnessAuth' ->> ${field} = ${k.id}
        UNION ALL
        SELECT 'revision ' || v.id FROM agents a JOIN agent_revisions v ON v.id = a.active_revision_id
          WHERE a.namespace_id = ${k.namespace_id} AND v.snapshot -> 'harness' -> 'auth' ->> ${field} = ${k.id}
        UNION ALL
        SELECT 'deployment ' || v.id FROM agent_revisions v
          JOIN work_items w ON w.kind = ${AGENT_DEPLOY} AND w.key = v.id AND w.state IN ('queued', 'running')
          WHERE v.namespace_id = ${k.namespace_id} AND v.snapshot -> 'harness' -> 'auth' ->> ${field} = ${k.id}
        LIMIT 1
      `
    })(key).pipe(Effect.map((row) => Option.getOrUndefined(Option.map(row, (r) => r.referrer))), Effect.orDie)
