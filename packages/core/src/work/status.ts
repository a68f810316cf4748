import { SqlClient, SqlSchema } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Option, Schema } from "effect"
import { toWorkItem, type WorkItem, workItemColumns, WorkItemRow } from "./item.js"
import { exportedFn } from "../observability/spans.js"

const isUuid = Schema.is(Schema.UUID)

/**
 * Reads one work item's status. An id that is not a UUID, or names no item, gives `None`.
 * Runs on the ambient `SqlClient`, so inside a transaction it sees that transaction's writes.
 */
export const getWorkItem: (id: string) => Effect.Effect<Option.Option<WorkItem>, SqlError, SqlClient.SqlClient> =
  exportedFn("Work.get")(function* (id: string) {
    if (!isUuid(id)) return Option.none<WorkItem>()
    const sql = (yield* SqlClient.SqlClient).withoutTransforms()
    const find = SqlSchema.findOne({
      Request: Schema.String,
      Result: WorkItemRow,
      execute: (itemId) => sql`SELECT ${sql.literal(workItemColumns)} FROM work_items WHERE id = ${itemId}`
    })
    const row = yield* find(id).pipe(Effect.catchTag("ParseError", (error) => Effect.die(error)))
    return Option.map(row, toWorkItem)
  })
