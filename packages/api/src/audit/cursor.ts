/**
 * The audit API's opaque cursor: the last entry's `(at, id)` at database precision, as
 * base64url JSON. Clients only hand it back; anything that does not decode to that is 400.
 */
import { isRealInstant } from "@svc/core/api"
import { InvalidRequest } from "@svc/core/errors"
import { Effect } from "effect"

export interface AuditPosition {
  readonly at: string
  readonly id: string
}

const AT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/
const ID = /^[1-9]\d{0,17}$/

export const encodeCursor = (position: AuditPosition): string =>
  Buffer.from(JSON.stringify({ at: position.at, id: position.id }), "utf8").toString("base64url")

const invalid = () =>
  new InvalidRequest({
    message: "The cursor is not one this API issued.",
    details: [{ code: "INVALID_VALUE", path: "/cursor" }]
  })

const positionOf = (cursor: string): AuditPosition | undefined => {
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"))
    if (typeof value !== "object" || value === null) return undefined
    const { at, id } = value as { at?: unknown; id?: unknown }
    const valid = typeof at === "string" && AT.test(at) && isRealInstant(at) &&
      typeof id === "string" && ID.test(id)
    return valid ? { at, id } : undefined
  } catch {
    return undefined
  }
}

export const decodeCursor = (cursor: string): Effect.Effect<AuditPosition, InvalidRequest> => {
  const position = positionOf(cursor)
  return position === undefined ? Effect.fail(invalid()) : Effect.succeed(position)
}
