/**
 * The Presets service as a plain function, for the agents feature (provisioning from a Preset)
 * until it takes `Presets` as a dependency itself; then this file goes.
 */
import type { SqlClient } from "@effect/sql"
import type { Preset } from "@svc/core/api"
import type { NotFound } from "@svc/core/errors"
import type { CurrentCaller } from "@svc/core/iam"
import { NamespaceId, PresetId } from "@svc/core/schema"
import { Effect, Schema } from "effect"
import type { AuthorizationError } from "../auth/authorize.js"
import { Presets } from "./service.js"
import type { PgPool } from "@svc/core/db"

/** The ids come from a decoded request, so one that does not decode is a defect. */
export const getPreset = (
  namespaceId: string,
  presetId: string
): Effect.Effect<Preset, NotFound | AuthorizationError, SqlClient.SqlClient | PgPool | CurrentCaller> =>
  Effect.gen(function* () {
    const presets = yield* Presets
    const ns = yield* Schema.decode(NamespaceId)(namespaceId).pipe(Effect.orDie)
    const id = yield* Schema.decode(PresetId)(presetId).pipe(Effect.orDie)
    return yield* presets.get(ns, id)
  }).pipe(Effect.provide(Presets.Default))
