/**
 * What the agents feature takes from Configurations until it takes the `Configurations`
 * service as a dependency itself; then this file goes.
 */
import type { SqlClient } from "@effect/sql"
import type { SecretBindings } from "@svc/core/api"
import type { NotFound } from "@svc/core/errors"
import type { CurrentCaller } from "@svc/core/iam"
import { NamespaceId } from "@svc/core/schema"
import { Effect, Schema } from "effect"
import type { AuthorizationError } from "../auth/authorize.js"
import { Configurations } from "./service.js"
import type { PgPool } from "@svc/core/db"

export { configurationRef } from "./policy.js"

/** `Configurations.admitBindings`; the Namespace id comes from a decoded path, so one that does not decode is a defect. */
export const admitBindings = (
  namespaceId: string,
  bindings: SecretBindings
): Effect.Effect<void, NotFound | AuthorizationError, SqlClient.SqlClient | PgPool | CurrentCaller> =>
  Effect.gen(function* () {
    const configurations = yield* Configurations
    const ns = yield* Schema.decode(NamespaceId)(namespaceId).pipe(Effect.orDie)
    yield* configurations.admitBindings(ns, bindings)
  }).pipe(Effect.provide(Configurations.Default))
