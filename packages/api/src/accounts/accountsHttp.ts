import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { SvcApi } from "@svc/core/api"
import { Accounts } from "./accounts.js"
import { AccountStates } from "./accountState.js"
import { Recovery } from "./recovery.js"

/** Every operation needs a human Installation administrator (401/403), checked by the services. */
export const AuthAccountsLive = HttpApiBuilder.group(SvcApi, "authAccounts", (handlers) =>
  Effect.gen(function* () {
    const accounts = yield* Accounts
    const states = yield* AccountStates
    const recovery = yield* Recovery
    return handlers
      .handle("createAccount", ({ payload }) => accounts.create(payload))
      .handle("readAccount", ({ path }) => accounts.read(path.userId))
      .handle("disableAccount", ({ path, payload }) => states.disable(path.userId, payload.expectedVersion))
      .handle("enableAccount", ({ path, payload }) => states.enable(path.userId, payload.expectedVersion))
      .handle("revokeAccount", ({ path, payload }) => states.revoke(path.userId, payload.expectedVersion))
      .handle("enrolAccount", ({ path }) => states.enrol(path.userId))
      .handle("detachMethod", ({ path, payload }) => states.detachMethod(path.userId, path.methodId, payload.expectedVersion))
      .handle("linkCodehost", ({ path, payload }) => states.linkCodehost(path.userId, payload.subject, payload.expectedVersion))
      .handle("linkIdprovider", ({ path, payload }) => states.linkIdprovider(path.userId, payload.subject, payload.expectedVersion))
      .handle("readRecovery", () => recovery.read())
      .handle("moveRecovery", ({ payload }) => recovery.move(payload))
  })
)
