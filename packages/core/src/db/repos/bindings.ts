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

    return {
      /** Whether any AccessBinding grants the Role (a referenced Role cannot be deleted). */
      isRoleReferenced: (roleId: RoleId) => anyForRole(roleId).pipe(Effect.map(Option.isSome), Effect.orDie)
    }
  })
}) {}
