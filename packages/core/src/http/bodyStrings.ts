import type { ErrorDetail } from "../errors/detail.js"
import { jsonPointer } from "../errors/index.js"
import { Limits } from "../schema/index.js"

/**
 * Names that JavaScript objects give a meaning to: decoding and spreading drop or reinterpret
 * them (`__proto__` sets the prototype), so a map entry under one of them would vanish after
 * its checks, or worse. No field and no map of the API may use them.
 */
export const RESERVED_KEYS: ReadonlySet<string> = new Set(["__proto__", "constructor", "prototype"])

/** NUL ends strings in C, and PostgreSQL refuses it in text: no request string may hold one. */
export const hasNul = (text: string): boolean => text.includes("\u0000")

/**
 * What no JSON request body may hold, whatever the route: a string or a key with NUL
 * (INVALID_FORMAT) and a reserved key (INVALID_VALUE), each at its pointer, in document
 * order, at most SPEC 7.1's number of details. Checked here once, before any schema, so a
 * route cannot forget it. Iterative; the caller has bounded the depth already.
 */
export const forbiddenInBody = (body: unknown): Array<ErrorDetail> => {
  const details: Array<ErrorDetail> = []
  const stack: Array<{ readonly value: unknown; readonly path: ReadonlyArray<string | number> }> = [{ value: body, path: [] }]
  while (stack.length > 0 && details.length < Limits.errorDetails) {
    const { path, value } = stack.pop()!
    if (typeof value === "string") {
      if (hasNul(value)) details.push({ code: "INVALID_FORMAT", path: jsonPointer(path) })
      continue
    }
    if (typeof value !== "object" || value === null) continue
    // Children are pushed last-first so they are visited in document order.
    const children: Array<{ readonly value: unknown; readonly path: ReadonlyArray<string | number> }> = []
    if (Array.isArray(value)) {
      value.forEach((item, index) => children.push({ value: item, path: [...path, index] }))
    } else {
      // JSON.parse makes `__proto__` an own key; Object.entries sees it.
      for (const [key, item] of Object.entries(value)) {
        const at = [...path, key]
        if (hasNul(key)) details.push({ code: "INVALID_FORMAT", path: jsonPointer(at) })
        else if (RESERVED_KEYS.has(key)) details.push({ code: "INVALID_VALUE", path: jsonPointer(at) })
        else children.push({ value: item, path: at })
      }
    }
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]!)
  }
  return details.slice(0, Limits.errorDetails)
}
