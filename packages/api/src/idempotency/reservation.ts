/**
 * Taking a key (docs/decisions/idempotency.md): insert the reservation; if the key is taken,
 * compare, replay the stored response, or wait for the first request still in flight.
 */
import { type IdempotencyClaim, IdempotencyKeysRepo, type IdempotencyRow } from "@svc/core/db"
import { ResourceConflict } from "@svc/core/errors"
import { Effect } from "effect"
import { HEADER_POINTER } from "./response.js"

/** How long a repeat waits for the first request with its key to answer before 409. */
const WAIT_MS = 10_000
const POLL_MS = 50

export type Reservation = { readonly _tag: "Owner" } | { readonly _tag: "Stored"; readonly row: IdempotencyRow }

// A real timer: the wait must pass in wall time even where a test clock drives Effect.sleep.
const pause = Effect.promise(() => new Promise<void>((resolve) => setTimeout(resolve, POLL_MS)))

const mismatch = (row: IdempotencyRow, claim: IdempotencyClaim): string | undefined => {
  if (row.method !== claim.method || row.path !== claim.path) {
    return "This Idempotency-Key was used for another method or path."
  }
  if (row.body_digest !== claim.body_digest) return "This Idempotency-Key was used with another request body."
  return undefined
}

const conflict = (message: string) =>
  new ResourceConflict({ message, details: [{ code: "INVALID_VALUE", path: HEADER_POINTER }] })

/**
 * The caller owns the key (it acts and its response is stored), or the key holds a completed
 * response for the same request. A different request under the key is 409 at once; one still
 * in flight after the wait is 409 too.
 */
export const reserve = (claim: IdempotencyClaim) =>
  Effect.gen(function* () {
    const repo = yield* IdempotencyKeysRepo
    const key = { principal_id: claim.principal_id, key: claim.key }
    const deadline = Date.now() + WAIT_MS
    for (;;) {
      if (yield* repo.reserve(claim)) return { _tag: "Owner" } as Reservation
      const found = yield* repo.find(key)
      if (found._tag === "None") continue
      const row = found.value
      if (row.reusable) {
        yield* repo.removeReusable(key)
        continue
      }
      const problem = mismatch(row, claim)
      if (problem !== undefined) return yield* conflict(problem)
      if (row.status !== null) return { _tag: "Stored", row } as Reservation
      if (Date.now() > deadline) {
        return yield* conflict("A request with this Idempotency-Key is still in progress; retry later.")
      }
      yield* pause
    }
  })
