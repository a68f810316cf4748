import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { BuiltinRoles } from "./builtinRoles.js"
import { withExportedSpan } from "../observability/spans.js"

/**
 * Writes the built-in Roles as this build defines them (idempotent; run after migrations). They
 * are Installation-owned (no Namespace) and bindable where their scope allows.
 */
export const syncBuiltinRoles = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  for (const role of Object.values(BuiltinRoles)) {
    yield* sql`
      INSERT INTO roles (id, namespace_id, name, permissions, builtin)
      VALUES (${role.id}, NULL, ${role.name}, string_to_array(${role.permissions.join(",")}, ','), true)
      ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, permissions = EXCLUDED.permissions
    `
  }
}).pipe(withExportedSpan("Iam.syncBuiltinRoles"))
