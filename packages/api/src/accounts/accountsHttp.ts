import { HttpApiBuilder } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { SvcApi } from "@svc/core/api"
import { createAccount, readAccount } from "./accounts.js"
import { attachIdentity, changeAccountState, detachMethod, enrolAccount } from "./accountState.js"
import { requireHumanAdministrator } from "./guards.js"
import { enabledProviders } from "./providers.js"
import { moveRecovery, readRecovery } from "./recovery.js"

/** Every handler: a human Installation administrator first (401/403), then the operation. */
export const AuthAccountsLive = HttpApiBuilder.group(SvcApi, "authAccounts", (handlers) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const providers = yield* enabledProviders
    const admin = requireHumanAdministrator
    const run = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.provideService(effect, SqlClient.SqlClient, sql)
    return handlers
      .handle("createAccount", ({ payload }) =>
        run(Effect.flatMap(admin, (caller) => createAccount(caller, payload, providers))))
      .handle("readAccount", ({ path }) => run(Effect.zipRight(admin, readAccount(path.userId))))
      .handle("disableAccount", ({ path, payload }) =>
        run(Effect.flatMap(admin, (caller) => changeAccountState(caller, "disable", path.userId, payload.expectedVersion))))
      .handle("enableAccount", ({ path, payload }) =>
        run(Effect.flatMap(admin, (caller) => changeAccountState(caller, "enable", path.userId, payload.expectedVersion))))
      .handle("revokeAccount", ({ path, payload }) =>
        run(Effect.flatMap(admin, (caller) => changeAccountState(caller, "revoke", path.userId, payload.expectedVersion))))
      .handle("enrolAccount", ({ path }) => run(Effect.flatMap(admin, (caller) => enrolAccount(caller, path.userId))))
      .handle("detachMethod", ({ path, payload }) =>
        run(Effect.flatMap(admin, (caller) => detachMethod(caller, path.userId, path.methodId, payload.expectedVersion))))
      .handle("linkCodehost", ({ path, payload }) =>
        run(Effect.flatMap(admin, (caller) =>
          attachIdentity(caller, "codehost", providers, path.userId, payload.subject, payload.expectedVersion))))
      .handle("linkIdprovider", ({ path, payload }) =>
        run(Effect.flatMap(admin, (caller) =>
          attachIdentity(caller, "idprovider", providers, path.userId, payload.subject, payload.expectedVersion))))
      .handle("readRecovery", () => run(Effect.zipRight(admin, readRecovery)))
      .handle("moveRecovery", ({ payload }) => run(Effect.flatMap(admin, (caller) => moveRecovery(caller, payload))))
  })
)
