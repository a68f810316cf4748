/**
 * The `access_bindings` table (DESIGN §6): one Role granted to one principal on one exact
 * resource.
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { RoleId } from "../../schema/ids.js"

export class BindingsRepo extends Effect.Service<BindingsRepo>()("@svc/core/BindingsRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    const anyForRole = SqlSchema.findOne({
      Request: RoleId,
      Result: Schema.Struct({ id: Schema.String }),
      execute: (roleId) => sql`SELECT id FROM access_bindings WHERE role_id = ${roleId} LIMIT 1`
    })

    const removeForPrincipal = SqlSchema.findAll({
      Request: Schema.String,
      Result: Schema.Struct({ id: Schema.String }),
      execute: (principalId) => sql`DELETE FROM access_bindings WHERE principal_id = ${principalId} RETURNING id`
    })

    return {
      /** Whether any AccessBinding grants the Role (a referenced Role cannot be deleted). */
      isRoleReferenced: (roleId: RoleId) => anyForRole(roleId).pipe(Effect.map(Option.isSome), Effect.orDie),
      /** Removes every AccessBinding of a principal; how many there were. */
      removeForPrincipal: (principalId: string) =>
        removeForPrincipal(principalId).pipe(Effect.map((rows) => rows.length), Effect.orDie)
    }
  })
}) {}
