import { HttpApiBuilder } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { SecretDriver } from "@svc/core/drivers/secret"
import { Effect } from "effect"
import { SvcApi } from "@svc/core/api"
import { pageOf } from "../iam/access.js"
import { createSecret, deleteSecret, getSecret, listSecrets, updateSecret } from "./secrets.js"

/** The Secrets group, wired. Needs an SqlClient, a SecretDriver and the Authentication middleware. */
export const SecretsLive = HttpApiBuilder.group(SvcApi, "secrets", (handlers) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const driver = yield* SecretDriver
    const provide = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
      effect.pipe(Effect.provideService(SqlClient.SqlClient, sql), Effect.provideService(SecretDriver, driver))
    return handlers
      .handle("create", ({ path, payload }) => provide(createSecret(path.namespaceId, payload)))
      .handle("list", ({ path, urlParams }) => provide(listSecrets(path.namespaceId, pageOf(urlParams))))
      .handle("get", ({ path }) => provide(getSecret(path.namespaceId, path.secretId)))
      .handle("update", ({ path, payload }) => provide(updateSecret(path.namespaceId, path.secretId, payload)))
      .handle("delete", ({ path }) => provide(deleteSecret(path.namespaceId, path.secretId)))
  })
)
