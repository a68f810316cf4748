/**
 * A small API served through the real pipeline in tests: one JSON create endpoint (with the
 * body guard), a count, and endpoints that die, so every error path of the skeleton can be
 * exercised before the service has its own body-carrying endpoints.
 */
import { HttpApi, HttpApiBuilder, HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { documented, JsonBody, withApiErrors } from "@svc/core/api"
import { HealthApi } from "@svc/core/api"
import { checkReadiness } from "../../src/health/readiness.js"
import { BoundedInt, BoundedString, Envelope, RequestBody } from "@svc/core/schema"
import { Effect, Layer, Schema } from "effect"

export const INTERNAL_SECRET = "kaboom-internal-detail-7f3a"

const Thing = Schema.Struct({ id: Schema.Number, name: Schema.String }).annotations({ identifier: "Thing" })

export const CreateThing = RequestBody({
  name: BoundedString(1, 200),
  size: Schema.optional(BoundedInt(1, 10)),
  labels: Schema.optional(Schema.Array(BoundedString(1, 20))),
  extra: Schema.optional(Schema.Unknown)
})

const ThingsApi = HttpApiGroup.make("things")
  .add(
    HttpApiEndpoint.post("create", "/things")
      .setPayload(CreateThing)
      .addSuccess(Envelope(Thing), { status: 201 })
      .middleware(JsonBody)
  )
  .add(HttpApiEndpoint.get("count", "/things/count").addSuccess(Envelope(Schema.Struct({ count: Schema.Number }))))
  .add(HttpApiEndpoint.get("boom", "/boom").addSuccess(Envelope(Thing)))
  .add(HttpApiEndpoint.get("sqlBug", "/sql-bug").addSuccess(Envelope(Thing)))
  .add(HttpApiEndpoint.get("slow", "/slow").addSuccess(Envelope(Thing)))

export const ThingsTestApi = documented(withApiErrors(HttpApi.make("things")).add(HealthApi).add(ThingsApi))

const ThingsLive = HttpApiBuilder.group(ThingsTestApi, "things", (handlers) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`CREATE TABLE IF NOT EXISTS things (id serial PRIMARY KEY, name text NOT NULL)`.pipe(Effect.orDie)
    return handlers
      .handle("create", ({ payload }) =>
        sql<{ id: number; name: string }>`INSERT INTO things (name) VALUES (${payload.name}) RETURNING id, name`.pipe(
          Effect.map((rows) => rows[0]!),
          Effect.orDie
        ))
      .handle("count", () =>
        sql<{ count: number }>`SELECT count(*)::int AS count FROM things`.pipe(
          Effect.map((rows) => rows[0]!),
          Effect.orDie
        ))
      .handle("boom", () => Effect.die(new Error(`${INTERNAL_SECRET} at /srv/app.ts:12`)))
      .handle("sqlBug", () => sql`SELEC broken syntax`.pipe(Effect.as({ id: 0, name: "" }), Effect.orDie))
      .handle("slow", () => Effect.sleep("3 seconds").pipe(Effect.as({ id: 0, name: "slow" })))
  })
)

const HealthTestLive = HttpApiBuilder.group(ThingsTestApi, "health", (handlers) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    return handlers
      .handle("healthz", () => Effect.succeed({ status: "ok" } as const))
      .handle("readyz", () => checkReadiness().pipe(Effect.provideService(SqlClient.SqlClient, sql)))
  })
)

export const ThingsGroupsLive = Layer.mergeAll(ThingsLive, HealthTestLive)

