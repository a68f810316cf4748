import { hash, verify } from "@node-rs/argon2"
import { Effect } from "effect"
import { withExportedSpan } from "@svc/core/observability"

// argon2id with the library's defaults (OWASP's minimum: m=19 MiB, t=2, p=1).

/** The argon2id hash of a password, for storage. */
export const hashPassword = (password: string): Effect.Effect<string> =>
  Effect.promise(() => hash(password)).pipe(withExportedSpan("Passwords.hash"))

/** Whether `password` matches a stored hash; a malformed hash is a mismatch, never an error. */
export const verifyPassword = (stored: string, password: string): Effect.Effect<boolean> =>
  Effect.tryPromise(() => verify(stored, password)).pipe(
    Effect.orElseSucceed(() => false),
    withExportedSpan("Passwords.verify")
  )

/**
 * A hash to verify against when no account matches, so a sign-in for an unknown email costs
 * the same time as one for a known email.
 */
export const DECOY_HASH = "$argon2id$v=19$m=19456,t=2,p=1$22KqNxrZJ0ocKfUqldTnMQ$C/qgX3AbrZq8sJvi1Uzgw8zvPPXBQmxOjCt+diqWqk4"
