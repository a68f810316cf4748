import type { HttpServerRequest } from "@effect/platform"
import { Unauthenticated } from "@svc/core/errors"
import { Effect, Option } from "effect"

/** How many times the raw `Cookie` header names `name` (keys as the platform's parser reads them). */
const occurrences = (header: string, name: string): number =>
  header.split(";").filter((pair) => {
    const eq = pair.indexOf("=")
    return eq !== -1 && pair.slice(0, eq).trim() === name
  }).length

/**
 * The session cookie's value; None when it is absent or empty. A header that carries the name
 * more than once is refused (401): another host of a parent domain can plant a cookie of the
 * same name, and the parsed cookies keep whichever comes first, so a planted session could sign
 * the browser in as someone else (login CSRF). The raw header is read because the parsed record
 * has already dropped the duplicates.
 */
export const readSessionCookie = (
  request: HttpServerRequest.HttpServerRequest,
  name: string
): Effect.Effect<Option.Option<string>, Unauthenticated> => {
  if (occurrences(request.headers["cookie"] ?? "", name) > 1) {
    return Effect.fail(new Unauthenticated({ message: "The session cookie is ambiguous: it was sent more than once." }))
  }
  const token = request.cookies[name]
  return Effect.succeed(token === undefined || token.length === 0 ? Option.none() : Option.some(token))
}
