import { SqlClient } from "@effect/sql"
import { recordAudit } from "@svc/core/audit"
import type { BootstrapSettings, Environment } from "@svc/core/config"
import {
  AccountsRepo,
  BindingsRepo,
  InstallationRepo,
  Migrations,
  PrincipalsRepo,
  RecoveryRepo,
  ServiceKeysRepo
} from "@svc/core/db"
import { BuiltinRoles } from "@svc/core/iam"
import {
  BindingId,
  InstallationId,
  Limits,
  MethodId,
  PrincipalId,
  ServiceKeyId,
  ServicePrincipalId,
  UserId
} from "@svc/core/schema"
import { createNamespace } from "@svc/core/tenancy"
import { Data, Effect, Layer, Option, Redacted } from "effect"
import * as crypto from "node:crypto"
import { hashPassword } from "../auth/passwords.js"
import { newServiceKey } from "../serviceKeys/store.js"
import { checkOutputTarget, OutputFileError, writeOutputFile } from "./outputFiles.js"
import { exportedFn } from "@svc/core/observability"

/** SPEC 5.6: the bootstrap key's name and lifetime; the initial Namespace's name. */
export const BOOTSTRAP_KEY_NAME = "bootstrap-admin"
export const DEFAULT_NAMESPACE = "default"
const BOOTSTRAP_KEY_SECONDS = Limits.bootstrapServiceKeyDays * 86_400

export interface BootstrapInput extends BootstrapSettings {
  readonly env: Environment
  /** Development: the configured administrator's password (SVC_DEV_ADMIN_PASSWORD or generated). */
  readonly devAdminPassword: Option.Option<Redacted.Redacted<string>>
}

export type BootstrapOutcome =
  | { readonly _tag: "AlreadyBootstrapped"; readonly installationId: string }
  | {
    readonly _tag: "Bootstrapped"
    readonly installationId: string
    readonly namespaceId: string
    readonly serviceKeyId: string
    readonly keyPath: string
    readonly passwordPath: string | undefined
  }

/** Bootstrap did not complete; `reason` is a fixed code, the message names paths and rules only. */
export class BootstrapError extends Data.TaggedError("BootstrapError")<{
  readonly reason: string
  readonly problem: string
}> {
  override get message(): string {
    return this.problem
  }
}

/**
 * The repositories of the tables bootstrap writes besides Namespaces; each process that runs
 * bootstrap provides them (with its SqlClient).
 */
export const BootstrapReposLive = Layer.mergeAll(
  InstallationRepo.Default,
  AccountsRepo.Default,
  RecoveryRepo.Default,
  PrincipalsRepo.Default,
  BindingsRepo.Default,
  ServiceKeysRepo.Default
)

const currentInstallation = Effect.flatMap(InstallationRepo, (installation) => installation.current)

/** The ids bootstrap will create, chosen up front so a failure can name them. */
const plannedIds = () => ({
  installationId: InstallationId.make(),
  adminPrincipalId: PrincipalId.make(),
  adminUserId: UserId.make(),
  adminMethodId: MethodId.make(),
  servicePrincipalId: ServicePrincipalId.make(),
  serviceKeyId: ServiceKeyId.make()
})
type PlannedIds = ReturnType<typeof plannedIds>

const randomPassword = (): string => crypto.randomBytes(24).toString("base64url")

const toBootstrapError = (error: unknown): BootstrapError => {
  if (error instanceof BootstrapError) return error
  if (error instanceof OutputFileError) return new BootstrapError({ reason: `output-${error.reason}`, problem: error.message })
  const tag = typeof error === "object" && error !== null && "_tag" in error ? String(error._tag) : "unknown"
  if (tag === "NamespaceNameTaken") {
    return new BootstrapError({ reason: "namespace-exists", problem: `a Namespace named ${DEFAULT_NAMESPACE} already exists` })
  }
  if (tag === "SqlError") {
    // Only the SQLSTATE: a driver message may quote row values.
    const cause = (error as { cause?: unknown }).cause
    const state = typeof cause === "object" && cause !== null && "code" in cause ? ` (SQLSTATE ${String(cause.code)})` : ""
    return new BootstrapError({
      reason: "database",
      problem: `the database rejected or lost the bootstrap transaction${state}; its outcome may be unknown`
    })
  }
  return new BootstrapError({ reason: "internal", problem: `bootstrap failed (${tag})` })
}

/**
 * The transaction of SPEC 5.6.1-3: the Installation, its first human administrator and its
 * Installation-scoped service principal (each with its own binding to installation-admin),
 * the `default` Namespace with its queued provisioning, the 30-day `bootstrap-admin` key and
 * the bootstrap audit record. The outputs are written and synced inside the transaction, just
 * before it commits. Returns undefined when another initializer won the race.
 */
const bootstrapTransaction = (input: BootstrapInput, ids: PlannedIds, password: string, passwordHash: string) =>
  Effect.gen(function* () {
    const principals = yield* PrincipalsRepo
    const bindings = yield* BindingsRepo
    const accounts = yield* AccountsRepo
    const recovery = yield* RecoveryRepo
    const inserted = yield* Effect.flatMap(InstallationRepo, (installation) => installation.insert(ids.installationId))
    if (!inserted) return undefined
    const production = input.env === "production"

    yield* principals.insertHuman({ id: ids.adminPrincipalId, name: "Administrator" })
    yield* accounts.insert({ id: ids.adminUserId, principal_id: ids.adminPrincipalId, email: input.adminEmail, name: "Administrator" })
    yield* accounts.insertMethod({
      id: ids.adminMethodId,
      account_id: ids.adminUserId,
      provider_id: "password",
      subject: input.adminEmail,
      password_hash: passwordHash
    })
    // The first administrator is the recovery account until it is moved (SPEC 5.7).
    yield* recovery.insert({ account_id: ids.adminUserId, method_id: ids.adminMethodId })
    // The service identity: no email, password, session, Namespace or Agent owner.
    yield* principals.insertService({ id: ids.servicePrincipalId, namespace_id: null, name: "bootstrap service administrator" })
    const role = BuiltinRoles.installationAdmin.id
    for (const principalId of [ids.adminPrincipalId, ids.servicePrincipalId]) {
      yield* bindings.insertOnInstallation({ id: BindingId.make(), principal_id: principalId, role_id: role })
    }
    const namespace = yield* createNamespace({ name: DEFAULT_NAMESPACE })
    const { key, digest } = newServiceKey()
    const stored = yield* Effect.flatMap(ServiceKeysRepo, (keys) =>
      keys.insert({
        id: ids.serviceKeyId,
        service_principal_id: ids.servicePrincipalId,
        namespace_id: null,
        name: BOOTSTRAP_KEY_NAME,
        digest,
        expires_in_seconds: BOOTSTRAP_KEY_SECONDS,
        issued_by: null
      }))
    yield* recordAudit({
      kind: "installation.bootstrapped",
      outcome: "success",
      resource: { kind: "installation", id: ids.installationId },
      details: {
        environment: input.env,
        adminPrincipalId: ids.adminPrincipalId,
        adminUserId: ids.adminUserId,
        servicePrincipalId: ids.servicePrincipalId,
        roleId: role,
        namespaceId: namespace.id,
        serviceKeyId: ids.serviceKeyId,
        keyPath: input.keyPath,
        passwordPath: production ? input.passwordPath : null
      }
    })
    const output = {
      data: {
        id: ids.serviceKeyId,
        servicePrincipalId: ids.servicePrincipalId,
        name: BOOTSTRAP_KEY_NAME,
        expiresAt: stored.expires_at.toISOString(),
        key
      },
      meta: { installationId: ids.installationId }
    }
    // Durable before the commit: a committed Installation always has its outputs.
    yield* writeOutputFile(input.keyPath, `${JSON.stringify(output, null, 2)}\n`)
    if (production) yield* writeOutputFile(input.passwordPath, `${password}\n`)
    return { namespaceId: namespace.id }
  })

/** SPEC 5.6.6: the failure audit, in its own transaction, with non-secret ids and paths only. */
const recordFailure = (input: BootstrapInput, ids: PlannedIds, error: BootstrapError) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.withTransaction(
      recordAudit({
        kind: "installation.bootstrap-failed",
        outcome: "failure",
        resource: { kind: "installation", id: ids.installationId },
        details: {
          environment: input.env,
          reason: error.reason,
          installationId: ids.installationId,
          adminPrincipalId: ids.adminPrincipalId,
          servicePrincipalId: ids.servicePrincipalId,
          serviceKeyId: ids.serviceKeyId,
          keyPath: input.keyPath,
          passwordPath: input.env === "production" ? input.passwordPath : null
        }
      })
    )
  ).pipe(
    Effect.catchAll((cause) =>
      Effect.logError("the bootstrap failure could not be audited").pipe(
        Effect.annotateLogs({ auditError: cause._tag })
      )
    )
  )

/**
 * The bootstrap initializer (SPEC 5.6): runs after migrations, before the API and workers.
 * An Installation that exists gets nothing new. Otherwise one attempt: on any error it records
 * `installation.bootstrap-failed` and fails; nothing created is revoked, deleted or retried.
 * Credentials are never logged, audited or returned.
 */
export const runBootstrap = exportedFn("Bootstrap.run")(function* (input: BootstrapInput) {
  const sql = yield* SqlClient.SqlClient
  const ids = plannedIds()
  const attempt = Effect.gen(function* () {
    if (!(yield* Migrations.isCurrent)) {
      return yield* new BootstrapError({
        reason: "schema-not-current",
        problem: "the database schema is not current; run svc migrate first"
      })
    }
    // Initializers started together are serialised on one lock, held until the winner commits:
    // the next one then sees the Installation instead of the winner's half-written outputs.
    return yield* sql.withTransaction(
      Effect.gen(function* () {
        yield* sql`SELECT pg_advisory_xact_lock(hashtext('svc_bootstrap'))`
        const existing = yield* currentInstallation
        if (Option.isSome(existing)) return { _tag: "AlreadyBootstrapped", installationId: existing.value } as const
        const production = input.env === "production"
        const development = !production
        // Fail closed before anything is created.
        yield* checkOutputTarget(input.keyPath, { createDirectory: development })
        if (production) yield* checkOutputTarget(input.passwordPath, { createDirectory: false })
        const password = production
          ? randomPassword()
          : yield* Option.match(input.devAdminPassword, {
            onNone: () =>
              Effect.fail(new BootstrapError({ reason: "no-admin-password", problem: "SVC_DEV_ADMIN_PASSWORD: no development administrator password" })),
            onSome: (value) => Effect.succeed(Redacted.value(value))
          })
        const passwordHash = yield* hashPassword(password)
        const committed = yield* sql.withTransaction(bootstrapTransaction(input, ids, password, passwordHash))
        if (committed === undefined) {
          const winner = yield* currentInstallation
          return { _tag: "AlreadyBootstrapped", installationId: Option.getOrElse(winner, () => "") } as const
        }
        return {
          _tag: "Bootstrapped",
          installationId: ids.installationId,
          namespaceId: committed.namespaceId,
          serviceKeyId: ids.serviceKeyId,
          keyPath: input.keyPath,
          passwordPath: production ? input.passwordPath : undefined
        } as const
      })
    )
  })
  const outcome: BootstrapOutcome = yield* attempt.pipe(
    Effect.catchAll((failure) => {
      const error = toBootstrapError(failure)
      return Effect.zipRight(
        Effect.zipRight(
          Effect.logError(`bootstrap failed: ${error.problem}`).pipe(
            Effect.annotateLogs({
              reason: error.reason,
              installationId: ids.installationId,
              keyPath: input.keyPath,
              ...(input.env === "production" ? { passwordPath: input.passwordPath } : {})
            })
          ),
          recordFailure(input, ids, error)
        ),
        Effect.fail(error)
      )
    })
  )
  if (outcome._tag === "AlreadyBootstrapped") {
    yield* Effect.logInfo("installation already bootstrapped; nothing created").pipe(
      Effect.annotateLogs({ installationId: outcome.installationId })
    )
  } else {
    yield* Effect.logInfo(`bootstrap key written to ${outcome.keyPath}`).pipe(
      Effect.annotateLogs({
        installationId: outcome.installationId,
        namespaceId: outcome.namespaceId,
        serviceKeyId: outcome.serviceKeyId,
        keyPath: outcome.keyPath
      })
    )
    if (outcome.passwordPath !== undefined) {
      yield* Effect.logInfo(`administrator password written to ${outcome.passwordPath}`).pipe(
        Effect.annotateLogs({ adminEmail: input.adminEmail, passwordPath: outcome.passwordPath })
      )
    }
  }
  return outcome
})
