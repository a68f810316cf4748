/**
 * The `accounts` table and its `account_methods` (SPEC 2.12, 4.1): a human Principal's account
 * and the ways it signs in. Writes keep their `SqlError` (a unique email or external identity
 * becomes 409 in the service, and bootstrap reports a database failure as its own reason); a row
 * that does not decode is a defect.
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { MethodId, PrincipalId, UserId } from "../../schema/ids.js"

export const MethodProvider = Schema.Literal("password", "codehost", "idprovider")
export type MethodProvider = typeof MethodProvider.Type

/** An account as `GET /api/auth/accounts/{userId}` shows it; disabled includes revoked. */
export const AccountStateRow = Schema.Struct({
  id: UserId,
  principal_id: PrincipalId,
  disabled: Schema.Boolean,
  version: Schema.Int
})
export type AccountStateRow = typeof AccountStateRow.Type

/** An account row as the mutations see it, locked for the rest of the transaction. */
export const LockedAccountRow = Schema.Struct({
  id: UserId,
  principal_id: PrincipalId,
  disabled: Schema.Boolean,
  revoked: Schema.Boolean,
  enrolled: Schema.Boolean,
  version: Schema.Int
})
export type LockedAccountRow = typeof LockedAccountRow.Type

export const AccountMethodRow = Schema.Struct({ id: MethodId, provider_id: MethodProvider, subject: Schema.String })
export type AccountMethodRow = typeof AccountMethodRow.Type

const InsertAccount = Schema.Struct({ id: UserId, principal_id: PrincipalId, email: Schema.String, name: Schema.String })
const InsertMethod = Schema.Struct({
  id: MethodId,
  account_id: UserId,
  provider_id: MethodProvider,
  subject: Schema.String,
  /** Only for the password method. */
  password_hash: Schema.NullOr(Schema.String)
})
const MethodOfAccount = Schema.Struct({ id: Schema.String, account_id: Schema.String })
const ProviderIdentity = Schema.Struct({ provider_id: MethodProvider, account_id: Schema.String, subject: Schema.String })
const AccountFlag = Schema.Struct({ id: Schema.String, disabled: Schema.Boolean })

/** The password method of an account by email, and whether the account may sign in at all. */
export const PasswordAccountRow = Schema.Struct({
  id: UserId,
  principal_id: PrincipalId,
  password_hash: Schema.String,
  usable: Schema.Boolean
})
export type PasswordAccountRow = typeof PasswordAccountRow.Type

export const AccountProfileRow = Schema.Struct({ id: UserId, email: Schema.String, name: Schema.String })
export type AccountProfileRow = typeof AccountProfileRow.Type

export class AccountsRepo extends Effect.Service<AccountsRepo>()("@svc/core/AccountsRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    const findIdByEmail = SqlSchema.findOne({
      Request: Schema.String,
      Result: Schema.Struct({ id: UserId }),
      execute: (email) => sql`SELECT id FROM accounts WHERE email = ${email}`
    })

    /** An enrolled account (accounts made by an administrator or bootstrap are enrolled at once). */
    const insert = SqlSchema.void({
      Request: InsertAccount,
      execute: (row) => sql`
        INSERT INTO accounts (id, principal_id, email, name, enrolled_at)
        VALUES (${row.id}, ${row.principal_id}, ${row.email}, ${row.name}, now())
      `
    })

    const insertMethod = SqlSchema.void({
      Request: InsertMethod,
      execute: (row) => sql`
        INSERT INTO account_methods (id, account_id, provider_id, subject, password_hash)
        VALUES (${row.id}, ${row.account_id}, ${row.provider_id}, ${row.subject}, ${row.password_hash})
      `
    })

    const findState = SqlSchema.findOne({
      Request: Schema.String,
      Result: AccountStateRow,
      execute: (id) => sql`
        SELECT id, principal_id, (disabled OR revoked_at IS NOT NULL) AS disabled, version
        FROM accounts WHERE id = ${id}
      `
    })

    const methods = SqlSchema.findAll({
      Request: Schema.String,
      Result: AccountMethodRow,
      execute: (accountId) => sql`
        SELECT id, provider_id, subject FROM account_methods WHERE account_id = ${accountId} ORDER BY created_at, id
      `
    })

    const lock = SqlSchema.findOne({
      Request: Schema.String,
      Result: LockedAccountRow,
      execute: (id) => sql`
        SELECT id, principal_id, disabled, revoked_at IS NOT NULL AS revoked, enrolled_at IS NOT NULL AS enrolled, version
        FROM accounts WHERE id = ${id}
        FOR UPDATE
      `
    })

    const bumpVersion = SqlSchema.single({
      Request: Schema.String,
      Result: Schema.Struct({ version: Schema.Int }),
      execute: (id) => sql`
        UPDATE accounts SET version = version + 1, updated_at = now() WHERE id = ${id} RETURNING version
      `
    })

    const setDisabled = SqlSchema.void({
      Request: AccountFlag,
      execute: (row) => sql`UPDATE accounts SET disabled = ${row.disabled} WHERE id = ${row.id}`
    })

    const markRevoked = SqlSchema.void({
      Request: Schema.String,
      execute: (id) => sql`UPDATE accounts SET revoked_at = now() WHERE id = ${id}`
    })

    const markEnrolled = SqlSchema.void({
      Request: Schema.String,
      execute: (id) => sql`UPDATE accounts SET enrolled_at = now() WHERE id = ${id}`
    })

    const findMethod = SqlSchema.findOne({
      Request: MethodOfAccount,
      Result: Schema.Struct({ provider_id: MethodProvider }),
      execute: (key) => sql`SELECT provider_id FROM account_methods WHERE id = ${key.id} AND account_id = ${key.account_id}`
    })

    const methodCount = SqlSchema.single({
      Request: Schema.String,
      Result: Schema.Struct({ n: Schema.Number }),
      execute: (accountId) => sql`SELECT count(*)::int AS n FROM account_methods WHERE account_id = ${accountId}`
    })

    const removeMethod = SqlSchema.void({
      Request: Schema.String,
      execute: (id) => sql`DELETE FROM account_methods WHERE id = ${id}`
    })

    /** The accounts holding an identity of the provider that is the account's own or the subject. */
    const holdersOfIdentity = SqlSchema.findAll({
      Request: ProviderIdentity,
      Result: Schema.Struct({ account_id: UserId }),
      execute: (key) => sql`
        SELECT account_id FROM account_methods
        WHERE provider_id = ${key.provider_id} AND (account_id = ${key.account_id} OR subject = ${key.subject})
      `
    })

    const subjectTaken = SqlSchema.findOne({
      Request: Schema.Struct({ provider_id: MethodProvider, subject: Schema.String }),
      Result: Schema.Struct({ id: MethodId }),
      execute: (key) => sql`SELECT id FROM account_methods WHERE provider_id = ${key.provider_id} AND subject = ${key.subject}`
    })

    const passwordMethods = SqlSchema.findAll({
      Request: Schema.String,
      Result: Schema.Struct({ id: MethodId }),
      execute: (accountId) => sql`SELECT id FROM account_methods WHERE account_id = ${accountId} AND provider_id = 'password'`
    })


    /** Disabled, revoked, unenrolled or deleted accounts come back unusable (they fail like a wrong password). */
    const findPasswordAccount = SqlSchema.findOne({
      Request: Schema.String,
      Result: PasswordAccountRow,
      execute: (email) => sql`
        SELECT a.id, a.principal_id, m.password_hash,
               (NOT a.disabled AND a.revoked_at IS NULL AND a.enrolled_at IS NOT NULL AND p.deleted_at IS NULL) AS usable
        FROM accounts a
          JOIN principals p ON p.id = a.principal_id
          JOIN account_methods m ON m.account_id = a.id AND m.provider_id = 'password'
        WHERE a.email = ${email}
        ORDER BY m.created_at
        LIMIT 1
      `
    })

    const findProfile = SqlSchema.findOne({
      Request: Schema.String,
      Result: AccountProfileRow,
      execute: (id) => sql`SELECT id, email, name FROM accounts WHERE id = ${id}`
    })

    /**
     * The enrolled, enabled, unrevoked account with this external identity, if any. Keeps its
     * SqlError: external sign-in answers its own 503.
     */
    const findEnrolledBySubject = SqlSchema.findOne({
      Request: Schema.Struct({ provider_id: MethodProvider, subject: Schema.String }),
      Result: Schema.Struct({ id: UserId, principal_id: PrincipalId, method_id: MethodId }),
      execute: (key) => sql`
        SELECT a.id, a.principal_id, m.id AS method_id
        FROM account_methods m
          JOIN accounts a ON a.id = m.account_id
          JOIN principals p ON p.id = a.principal_id
        WHERE m.provider_id = ${key.provider_id} AND m.subject = ${key.subject}
          AND a.enrolled_at IS NOT NULL AND NOT a.disabled AND a.revoked_at IS NULL AND p.deleted_at IS NULL
      `
    })

    return {
      findEnrolledBySubject: (provider_id: MethodProvider, subject: string) =>
        findEnrolledBySubject({ provider_id, subject }).pipe(Effect.catchTag("ParseError", Effect.die)),
      /** Keeps its SqlError: sign-in answers its own 503. */
      findPasswordAccount: (email: string) => findPasswordAccount(email).pipe(Effect.catchTag("ParseError", Effect.die)),
      /** Keeps its SqlError: session inspection answers its own 503. */
      findProfile: (id: string) => findProfile(id).pipe(Effect.catchTag("ParseError", Effect.die)),
      emailTaken: (email: string) => findIdByEmail(email).pipe(Effect.map(Option.isSome), Effect.catchTag("ParseError", Effect.die)),
      insert: (row: typeof InsertAccount.Type) => insert(row).pipe(Effect.catchTag("ParseError", Effect.die)),
      insertMethod: (row: typeof InsertMethod.Type) => insertMethod(row).pipe(Effect.catchTag("ParseError", Effect.die)),
      /** None: no such account. Dies on a database failure (503 when it is lost). */
      findState: (id: string) => findState(id).pipe(Effect.orDie),
      methods: (accountId: string) => methods(accountId).pipe(Effect.orDie),
      lock: (id: string) => lock(id).pipe(Effect.catchTag("ParseError", Effect.die)),
      bumpVersion: (id: string) =>
        bumpVersion(id).pipe(
          Effect.map((row) => row.version),
          Effect.catchTags({ ParseError: Effect.die, NoSuchElementException: Effect.die })
        ),
      setDisabled: (row: typeof AccountFlag.Type) => setDisabled(row).pipe(Effect.catchTag("ParseError", Effect.die)),
      markRevoked: (id: string) => markRevoked(id).pipe(Effect.catchTag("ParseError", Effect.die)),
      markEnrolled: (id: string) => markEnrolled(id).pipe(Effect.catchTag("ParseError", Effect.die)),
      findMethod: (key: typeof MethodOfAccount.Type) => findMethod(key).pipe(Effect.catchTag("ParseError", Effect.die)),
      removeMethod: (id: string) => removeMethod(id).pipe(Effect.catchTag("ParseError", Effect.die)),
      /** How many sign-in methods the account has (read under the caller's lock on the account). */
      methodCount: (accountId: string) =>
        methodCount(accountId).pipe(Effect.map((row) => row.n), Effect.catchTag("ParseError", "NoSuchElementException", Effect.die)),
      holdersOfIdentity: (key: typeof ProviderIdentity.Type) => holdersOfIdentity(key).pipe(Effect.catchTag("ParseError", Effect.die)),
      subjectTaken: (provider_id: MethodProvider, subject: string) =>
        subjectTaken({ provider_id, subject }).pipe(Effect.map(Option.isSome), Effect.catchTag("ParseError", Effect.die)),
      passwordMethods: (accountId: string) => passwordMethods(accountId).pipe(Effect.catchTag("ParseError", Effect.die))
    }
  })
}) {}
