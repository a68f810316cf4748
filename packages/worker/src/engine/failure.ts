import { WorkCodes } from "@svc/core/work"
import { Data } from "effect"

/**
 * A handler's typed failure. `code` and `message` are recorded on the work item as its
 * `lastAttempt` and may be shown to users, so they must be safe, fixed texts: never native
 * error text, SQL or secrets (log those instead).
 *
 * A failure is retried with backoff until the item's deadline, unless `permanent` is set, in
 * which case the item fails at once.
 */
export class WorkFailure extends Data.TaggedError("WorkFailure")<{
  /** Machine-readable code, 1-64 characters (e.g. `RUNTIME_UNAVAILABLE`). */
  readonly code: string
  /** Safe human-readable text; truncated to 256 characters when recorded. */
  readonly message: string
  /** Fail the item now instead of retrying. */
  readonly permanent?: boolean | undefined
}> {}

/** The engine's own codes live in `@svc/core/work`, where status readers find them too. */
export { WorkCodes, WorkMessages } from "@svc/core/work"

export const MAX_CODE_LENGTH = 64
export const MAX_MESSAGE_LENGTH = 256

const truncate = (text: string, max: number): string => {
  const chars = Array.from(text)
  return chars.length <= max ? text : chars.slice(0, max).join("")
}

/** A recordable code: 1-64 characters. */
export const recordableCode = (code: string): string => {
  const trimmed = code.trim()
  return trimmed.length === 0 ? WorkCodes.INTERNAL_ERROR : truncate(trimmed, MAX_CODE_LENGTH)
}

/** A recordable message: 1-256 characters. */
export const recordableMessage = (message: string): string => {
  const trimmed = message.trim()
  return trimmed.length === 0 ? "The attempt failed." : truncate(trimmed, MAX_MESSAGE_LENGTH)
}
