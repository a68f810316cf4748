import { SqlError } from "@effect/sql/SqlError"
import { AuditLog } from "@svc/core/audit"
import { AccountsRepo, BindingsRepo, PrincipalsRepo, RolesRepo } from "@svc/core/db"
import { Forbidden, InvalidRequest, NotFound, ResourceConflict } from "@svc/core/errors"
import { BuiltinRoles } from "@svc/core/iam"
import { BindingId, charLength, Limits, MethodId, PrincipalId, type RoleId, UserId } from "@svc/core/schema"
import { Effect, Option } from "effect"
import { hashPassword } from "../auth/passwords.js"
import { AccountGuards, isUniqueViolation } from "./guards.js"
import { enabledProviders } from "./providers.js"
import type { CreateAccountBody } from "@svc/core/api"
import { exportedFn } from "@svc/core/observability"

const NAMESPACE_ROLE_IDS: ReadonlyArray<string> = Object.values(BuiltinRoles)
  .filter((role) => role.scope === "namespace")
  .map((role) => role.id)

const duplicateEmail = new ResourceConflict({ message: "An account with this email already exists." })
const codehostOff = new ResourceConflict({ message: "Sign-in with codehost is not enabled." })
const identityTaken = new ResourceConflict({ message: "This external identity is already attached to an account." })
/** Lowercasing can lengthen an email (U+0130 becomes two code points) past SPEC 8's 320. */
const emailTooLong = new InvalidRequest({
  message: `email must be at most ${Limits.accountEmail.max} characters once lowercased.`,
  details: [{ code: "TOO_LONG", path: "/email" }]
})

/** A name is 1-200 characters and the email up to 320, so the default is the email's first 200 code points. */
const defaultName = (email: string) => Array.from(email).slice(0, Limits.accountName.max).join("")

const invalidRole = new InvalidRequest({
  message: "roleId must name an existing Installation-scoped Role.",
  details: [{ code: "INVALID_VALUE", path: "/roleId" }]
})

/** Creating and reading accounts (SPEC 4.1, 2.12); every call needs a human Installation administrator. */
export class Accounts extends Effect.Service<Accounts>()("@svc/api/Accounts", {
  effect: Effect.gen(function* () {
    const accounts = yield* AccountsRepo
    const principals = yield* PrincipalsRepo
    const roles = yield* RolesRepo
    const bindings = yield* BindingsRepo
    const audit = yield* AuditLog
    const guards = yield* AccountGuards
    const providers = yield* enabledProviders

    /**
     * `POST /api/auth/accounts` (SPEC 4.1, 5.7): one transaction writes the Principal, the
     * enrolled account, its password, the optional Installation grant and code-host identity,
     * and the `account.created` audit. No session is issued.
     */
    const create = exportedFn("Accounts.create")(function* (body: typeof CreateAccountBody.Type) {
      const caller = yield* guards.requireHumanAdministrator
      const email = body.email.toLowerCase()
      if (charLength(email) > Limits.accountEmail.max) return yield* emailTooLong
      const name = body.name ?? defaultName(email)
      if (body.codehost !== undefined && !providers.codehost) return yield* codehostOff
      const passwordHash = yield* hashPassword(body.password)
      const userId = UserId.make()
      const principalId = PrincipalId.make()
      const write = Effect.gen(function* () {
        if (yield* accounts.emailTaken(email)) return yield* duplicateEmail
        let roleId: Option.Option<RoleId> = Option.none()
        if (body.roleId !== undefined) {
          const role = yield* roles.findInstallationRole(body.roleId)
          if (Option.isNone(role) || NAMESPACE_ROLE_IDS.includes(body.roleId)) return yield* invalidRole
          // No escalation: the administrator may grant only a Role it holds on the Installation.
          if (!(yield* bindings.holdsOnInstallation({ principal_id: caller.principalId, role_id: body.roleId }))) {
            return yield* new Forbidden({ message: "The caller may grant only a Role it holds on the Installation." })
          }
          roleId = Option.some(role.value.id)
        }
        if (body.codehost !== undefined && (yield* accounts.subjectTaken("codehost", body.codehost.subject))) {
          return yield* identityTaken
        }
        yield* principals.insertHuman({ id: principalId, name })
        yield* accounts.insert({ id: userId, principal_id: principalId, email, name })
        yield* accounts.insertMethod({
          id: MethodId.make(),
          account_id: userId,
          provider_id: "password",
          subject: email,
          password_hash: passwordHash
        })
        if (body.codehost !== undefined) {
          yield* accounts.insertMethod({
            id: MethodId.make(),
            account_id: userId,
            provider_id: "codehost",
            subject: body.codehost.subject,
            password_hash: null
          })
        }
        if (Option.isSome(roleId)) {
          yield* bindings.insertOnInstallation({ id: BindingId.make(), principal_id: principalId, role_id: roleId.value })
        }
        yield* audit.record({
          kind: "account.created",
          outcome: "success",
          actorPrincipalId: caller.principalId,
          resource: { kind: "account", id: userId },
          details: body.roleId !== undefined
            ? { principalId, roleId: body.roleId, codehost: body.codehost !== undefined }
            : { principalId, grant: "none", codehost: body.codehost !== undefined }
        })
        return { email, id: userId, name, principalId }
      }).pipe(
        Effect.catchIf(
          (error): error is SqlError => error instanceof SqlError && isUniqueViolation(error),
          () => Effect.fail(new ResourceConflict({ message: "The email or external identity is already in use." }))
        ),
        Effect.catchTag("ParseError", Effect.die)
      )
      return yield* guards.transactional(caller, { kind: "account", id: userId }, write)
    })

    /** `GET /api/auth/accounts/{userId}`: state, methods and version (SPEC 2.12). */
    const read = exportedFn("Accounts.read")(function* (userId: string) {
      yield* guards.requireHumanAdministrator
      const found = yield* accounts.findState(userId)
      if (Option.isNone(found)) return yield* new NotFound({ message: "The account does not exist." })
      const account = found.value
      const methods = yield* accounts.methods(userId)
      return {
        disabled: account.disabled,
        methods: methods.map((m) => ({ methodId: m.id, providerId: m.provider_id, subject: m.subject })),
        principalId: account.principal_id,
        userId: account.id,
        version: account.version
      }
    })

    return { create, read }
  }),
  dependencies: [AccountsRepo.Default, PrincipalsRepo.Default, RolesRepo.Default, BindingsRepo.Default, AuditLog.Default, AccountGuards.Default]
}) {}
