import type { SqlError } from "@effect/sql/SqlError"
import { sendNamed } from "@svc/core/db"
import { Effect, Either } from "effect"
import type pg from "pg"
import { WorkCodes, WorkMessages } from "./failure.js"

/** What a slot asks for: the next item, after recording its attempt's success when it has one. */
export interface ClaimRequest {
  readonly kinds: ReadonlyArray<string>
  readonly succeeded: { readonly id: string; readonly attempt: number } | null
}

/** A claimed row as `work_claim_batch` returns it (decoded by the caller). */
export interface ClaimRow {
  readonly id: string | null
  readonly [column: string]: unknown
}

/** `succeeded`: the request's success was recorded (false: fenced, or there was none). */
export interface ClaimAnswer {
  readonly succeeded: boolean
  readonly row: ClaimRow | undefined
}

interface Waiting {
  readonly request: ClaimRequest
  readonly kindsKey: string
  readonly resume: (answer: Effect.Effect<ClaimAnswer, SqlError>) => void
}

const BATCH = "SELECT * FROM work_claim_batch($1, $2::text[], $3, $4, $5::uuid[], $6::int[], $7, $8)"
// One request alone goes through `work_claim` (migration 0019): for a single item it costs the
// server less than the batch function's arrays.
const SINGLE = "SELECT * FROM work_claim($1, $2::text[], $3, 1, $4, $5, $6, $7)"

/**
 * One worker's claims, coalesced (group commit): the requests its slots make in one turn of the
 * event loop (slots answered by the same call run on together and ask again together) go out at
 * the end of that turn (`setImmediate`) in one call of `work_claim_batch` (migration 0020), a
 * named prepared statement: one round trip and one commit for them all. A request alone goes as
 * `work_claim`, and a worker with a single slot sends at once. Calls do not wait for each other.
 * Each request gets its own answer: whether its success was recorded (fenced per item) and at
 * most one claimed row. Requests for different kind lists never share a call.
 *
 * Once sent, a call runs to completion: a request whose fiber is interrupted meanwhile loses its
 * answer, so callers request uninterruptibly (the slots do), as with any claim.
 */
export const makeClaimBatch = (pool: pg.Pool, workerId: string, leaseSeconds: number, slots: number) => {
  let waiting: Array<Waiting> = []
  let scheduled = false

  const sendOne = (w: Waiting): void => {
    const { kinds, succeeded } = w.request
    sendNamed<ClaimRow & { readonly finished: boolean | null }>(
      pool,
      SINGLE,
      [
        workerId,
        kinds,
        leaseSeconds,
        succeeded === null ? null : succeeded.id,
        succeeded === null ? null : succeeded.attempt,
        WorkCodes.SUCCEEDED,
        WorkMessages.SUCCEEDED
      ],
      (result) =>
        w.resume(
          Either.map(result, (rows) => {
            const row = rows[0]
            return { succeeded: row?.finished === true, row: row?.id === null ? undefined : row }
          })
        )
    )
  }

  const sendBatch = (batch: ReadonlyArray<Waiting>): void => {
    const ids: Array<string> = []
    const attempts: Array<number> = []
    for (const { request } of batch) {
      if (request.succeeded !== null) {
        ids.push(request.succeeded.id)
        attempts.push(request.succeeded.attempt)
      }
    }
    sendNamed<ClaimRow & { readonly finished: ReadonlyArray<string> }>(
      pool,
      BATCH,
      [workerId, batch[0]!.request.kinds, leaseSeconds, batch.length, ids, attempts, WorkCodes.SUCCEEDED, WorkMessages.SUCCEEDED],
      (result) => {
        if (Either.isLeft(result)) {
          const failure = Either.left(result.left)
          for (const w of batch) w.resume(failure)
          return
        }
        const finished = new Set(result.right[0]?.finished ?? [])
        const claimed = result.right.filter((row) => row.id !== null)
        batch.forEach((w, i) =>
          w.resume(
            Effect.succeed({
              succeeded: w.request.succeeded !== null && finished.has(w.request.succeeded.id),
              row: claimed[i]
            })
          )
        )
      }
    )
  }

  const flush = (): void => {
    scheduled = false
    const groups = new Map<string, Array<Waiting>>()
    for (const w of waiting) {
      const group = groups.get(w.kindsKey)
      if (group === undefined) groups.set(w.kindsKey, [w])
      else group.push(w)
    }
    waiting = []
    for (const batch of groups.values()) (batch.length === 1 ? sendOne(batch[0]!) : sendBatch(batch))
  }

  return (request: ClaimRequest): Effect.Effect<ClaimAnswer, SqlError> =>
    Effect.async<ClaimAnswer, SqlError>((resume) => {
      const w = { request, kindsKey: request.kinds.join("\u0000"), resume }
      // A single slot has no one to share a call with.
      if (slots === 1) return sendOne(w)
      waiting.push(w)
      if (!scheduled) {
        scheduled = true
        setImmediate(flush)
      }
    })
}
