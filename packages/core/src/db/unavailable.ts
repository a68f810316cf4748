import type { SqlError } from "@effect/sql"
import { Cause } from "effect"

// SQLSTATE classes and codes that mean "the database is not there right now", as opposed to a
// bug in a statement: connection exceptions (08), operator intervention (57P01-57P03),
// insufficient resources (53), and the database having been dropped or renamed (3D000).
const UNAVAILABLE_SQLSTATE = /^(08...|53...|57P0[1-4]|3D000)$/
// Node socket errors seen when the server is down or unreachable.
const UNAVAILABLE_ERRNO = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EHOSTUNREACH", "ENOTFOUND", "EPIPE"])

const causeChain = (error: unknown): Array<unknown> => {
  const chain: Array<unknown> = []
  let current: unknown = error
  while (current !== undefined && current !== null && chain.length < 8) {
    chain.push(current)
    current = typeof current === "object" && "cause" in current ? (current as { cause: unknown }).cause : undefined
  }
  return chain
}

const looksUnavailable = (error: unknown): boolean => {
  if (typeof error !== "object" || error === null) return false
  const code = (error as { code?: unknown }).code
  if (typeof code === "string" && (UNAVAILABLE_SQLSTATE.test(code) || UNAVAILABLE_ERRNO.has(code))) return true
  const message = (error as { message?: unknown }).message
  return typeof message === "string" &&
    /Connection terminated|connection timeout|timeout exceeded when trying to connect|Client has encountered a connection error|Query read timeout/i
      .test(message)
}

/** True when a SQL failure means the database is unreachable (503), not a bad statement (500). */
export const isDatabaseUnavailable = (error: SqlError.SqlError | unknown): boolean =>
  causeChain(error).some(looksUnavailable)

/** The same question for a whole Cause (defects included). */
export const causeIsDatabaseUnavailable = (cause: Cause.Cause<unknown>): boolean =>
  [...Cause.failures(cause), ...Cause.defects(cause)].some(isDatabaseUnavailable)
