import { HttpApiSchema } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { ErrorClasses, ErrorCodes, ErrorStatus, ErrorWire, NotFound, codeOf } from "@svc/core/errors"
import { CurrentRequestId } from "@svc/core/schema"
import { Effect, Schema } from "effect"

// SPEC 7.1, verbatim: the list the mapping must cover exactly.
const SPEC_CODES = `INVALID_REQUEST, UNAUTHENTICATED, FORBIDDEN, NOT_FOUND, METHOD_NOT_ALLOWED, INSTALLATION_EXISTS,
RESOURCE_CONFLICT, AGENT_DELETING, NAMESPACE_NOT_READY, NAMESPACE_NOT_EMPTY, PAYLOAD_TOO_LARGE, UNSUPPORTED_MEDIA_TYPE,
UNKNOWN_OUTCOME, NOT_IMPLEMENTED, INTERNAL_ERROR, DEPENDENCY_UNAVAILABLE, REPOSITORY_OPTIONS_UNAVAILABLE,
MODEL_DISCOVERY_CREDENTIALS_REJECTED, MODEL_DISCOVERY_RATE_LIMITED, MODEL_DISCOVERY_UNAVAILABLE,
MODEL_DISCOVERY_INVALID_RESPONSE, PLUGIN_DISCOVERY_CREDENTIALS_REJECTED, PLUGIN_DISCOVERY_RATE_LIMITED,
PLUGIN_DISCOVERY_UNAVAILABLE, PLUGIN_DISCOVERY_INVALID_RESPONSE, CHANNEL_DIRECTORY_CREDENTIALS_REJECTED,
CHANNEL_DIRECTORY_MISSING_SCOPE, CHANNEL_DIRECTORY_RATE_LIMITED, CHANNEL_DIRECTORY_INVALID_RESPONSE,
CHANNEL_DIRECTORY_UNAVAILABLE, CHANNEL_CREDENTIAL_ROLE_MISMATCH, CHANNEL_CREDENTIAL_CREDENTIALS_REJECTED,
CHANNEL_CREDENTIAL_UNAVAILABLE, CHANNEL_CREDENTIAL_BINDING_REQUIRED`
  .split(",")
  .map((code) => code.trim())

// Statuses SPEC states outright (7.2, 7.3, 7.4).
const SPEC_STATUSES: Record<string, number> = {
  INVALID_REQUEST: 400,
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  RESOURCE_CONFLICT: 409,
  AGENT_DELETING: 409,
  NAMESPACE_NOT_READY: 409,
  NAMESPACE_NOT_EMPTY: 409,
  PAYLOAD_TOO_LARGE: 413,
  NOT_IMPLEMENTED: 501,
  DEPENDENCY_UNAVAILABLE: 503,
  UNKNOWN_OUTCOME: 503,
  REPOSITORY_OPTIONS_UNAVAILABLE: 503
}

const requestId = "req_3b241101-e2bb-4255-8caf-4136c566a962"

describe("the error mapping", () => {
  it("has exactly the SPEC 7.1 codes, each with a class, a status and a wire schema", () => {
    expect([...ErrorCodes].sort()).toEqual([...SPEC_CODES].sort())
    expect(Object.keys(ErrorClasses).sort()).toEqual([...SPEC_CODES].sort())
    expect(Object.keys(ErrorWire).sort()).toEqual([...SPEC_CODES].sort())
    for (const code of SPEC_CODES) {
      const status = ErrorStatus[code as keyof typeof ErrorStatus]
      expect(status, code).toBeGreaterThanOrEqual(400)
      expect(status, code).toBeLessThan(600)
      expect(HttpApiSchema.getStatusErrorAST(ErrorWire[code as keyof typeof ErrorWire].ast), code).toBe(status)
    }
    for (const [code, status] of Object.entries(SPEC_STATUSES)) {
      expect(ErrorStatus[code as keyof typeof ErrorStatus], code).toBe(status)
    }
  })

  it("gives every class a distinct tag that maps back to its code", () => {
    const tags = new Set(Object.values(ErrorClasses).map((cls) => cls._tag))
    expect(tags.size).toBe(SPEC_CODES.length)
    for (const code of ErrorCodes) {
      const Cls = ErrorClasses[code]
      expect(codeOf(new Cls({ message: "m" }))).toBe(code)
    }
  })

  it.effect("encodes the SPEC 7.1 envelope with the current request id, and decodes it back", () =>
    Effect.gen(function* () {
      const error = new NotFound({ message: "Namespace not found", details: [{ code: "INVALID_FORMAT", path: "/id" }] })
      const wire = yield* Schema.encode(ErrorWire.NOT_FOUND)(error).pipe(
        Effect.provideService(CurrentRequestId, requestId)
      )
      expect(wire).toEqual({
        error: { code: "NOT_FOUND", message: "Namespace not found", details: [{ code: "INVALID_FORMAT", path: "/id" }] },
        meta: { requestId }
      })
      const back = yield* Schema.decodeUnknown(ErrorWire.NOT_FOUND)(wire)
      expect(back).toBeInstanceOf(NotFound)
      expect(back.message).toBe("Namespace not found")
    }))

  it.effect("bounds the message to 1-256 characters and details to 32 items", () =>
    Effect.gen(function* () {
      const details = Array.from({ length: 40 }, (_, i) => ({ code: "REQUIRED" as const, path: `/f${i}` }))
      const long = yield* Schema.encode(ErrorWire.NOT_FOUND)(new NotFound({ message: "x".repeat(300), details }))
      expect(long.error.message).toHaveLength(256)
      expect(long.error.details).toHaveLength(32)
      const empty = yield* Schema.encode(ErrorWire.NOT_FOUND)(new NotFound({ message: "" }))
      expect(empty.error.message).toBe("NOT_FOUND")
      expect("details" in empty.error).toBe(false)
    }))
})
