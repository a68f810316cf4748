/**
 * The idempotency middlewares (DESIGN §18, docs/decisions/idempotency.md). Declared on an
 * endpoint before its body check and authentication, they run after both: the caller is known
 * and the body is checked JSON. Without an `Idempotency-Key` header they do nothing.
 */
import { HttpApp, HttpServerRequest, type HttpServerResponse } from "@effect/platform"
import { IDEMPOTENCY_KEY_HEADER, IDEMPOTENCY_KEY_PATTERN, Idempotency, IdempotencyWithheld } from "@svc/core/api"
import { type IdempotencyKeyOf, IdempotencyKeysRepo } from "@svc/core/db"
import { InvalidRequest } from "@svc/core/errors"
import { BodyLimit, bodyTextOnce } from "@svc/core/http"
import { CurrentCaller } from "@svc/core/iam"
import { CurrentRequestId } from "@svc/core/schema"
import { Effect, Layer } from "effect"
import { bodyDigest } from "./digest.js"
import { reserve } from "./reservation.js"
import { bodyJson, HEADER_POINTER, isKept, replayOf, withheldConflict } from "./response.js"

const invalidKey = () =>
  new InvalidRequest({
    message: "The Idempotency-Key header must be 1-255 visible ASCII characters.",
    details: [{ code: "INVALID_FORMAT", path: HEADER_POINTER }]
  })

/** After the first request's handler answered: keep the response, or free the key. */
const settle = (repo: IdempotencyKeysRepo, key: IdempotencyKeyOf, withheld: boolean) =>
  (response: HttpServerResponse.HttpServerResponse) => {
    const status = response.status
    const secretBearing = withheld && status >= 200 && status < 300
    const done = isKept(status)
      ? repo.complete({ ...key, status, response_body: secretBearing ? null : bodyJson(response), withheld: secretBearing })
      : repo.release(key)
    // A failure here leaves the reservation in flight; it is taken over once abandoned.
    return done.pipe(
      Effect.catchAllCause((cause) => Effect.logWarning("idempotency: could not settle a key", cause)),
      Effect.as(response)
    )
  }

const guard = (withheld: boolean) =>
  Effect.map(Effect.all([IdempotencyKeysRepo, BodyLimit]), ([repo, { maxBytes }]) =>
    Effect.gen(function* () {
      const request = yield* HttpServerRequest.HttpServerRequest
      const key = request.headers[IDEMPOTENCY_KEY_HEADER]
      if (key === undefined) return
      if (!IDEMPOTENCY_KEY_PATTERN.test(key)) return yield* invalidKey()
      const caller = yield* Effect.serviceOption(CurrentCaller)
      if (caller._tag === "None") {
        return yield* Effect.dieMessage("Idempotency must be declared before Authentication on the endpoint")
      }
      const principalId = caller.value.principalId
      // The body check before this cached the text. A bodyless route (deploy, stop) ignores a
      // body, so one is read only up to the body limit, and one it cannot read counts as none.
      const text = yield* bodyTextOnce(request, maxBytes).pipe(Effect.orElseSucceed(() => ""))
      const url = new URL(request.url, "http://localhost")
      const claim = {
        principal_id: principalId,
        key,
        method: request.method,
        path: url.pathname + url.search,
        body_digest: yield* bodyDigest(principalId, key, text)
      }
      const reservation = yield* reserve(claim).pipe(Effect.provideService(IdempotencyKeysRepo, repo))
      if (reservation._tag === "Owner") {
        return yield* HttpApp.appendPreResponseHandler((_request, response) =>
          settle(repo, { principal_id: principalId, key }, withheld)(response)
        )
      }
      if (reservation.row.withheld) return yield* withheldConflict()
      // The stored answer ends the request here: the pipeline sends a ready response as it is.
      return yield* Effect.die(replayOf(reservation.row, yield* CurrentRequestId))
    }))

export const IdempotencyLive = Layer.effect(Idempotency, guard(false))
export const IdempotencyWithheldLive = Layer.effect(IdempotencyWithheld, guard(true))

/** Both middlewares, with their repository. */
export const IdempotencyMiddlewaresLive = Layer.mergeAll(IdempotencyLive, IdempotencyWithheldLive).pipe(
  Layer.provide(IdempotencyKeysRepo.Default)
)
