/**
 * The one way the console reaches the service: `@svc/core/client` in Browser credentials mode
 * (the browser's own cookie jar and Origin; the session cookie is HttpOnly and never visible
 * here). Every call becomes a Promise for TanStack Query, failing with an `ApiFailure` that
 * carries the SPEC 7.1 status and code so pages can tell denied from missing from broken.
 */
import { FetchHttpClient } from "@effect/platform"
import { type Client, Credentials, make } from "@svc/core/client"
import { type ApiError, ErrorClasses, type ErrorCode, ErrorCodes, ErrorStatus } from "@svc/core/errors"
import { Cause, Effect, Exit, Option, ParseResult } from "effect"

export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: ReadonlyArray<unknown> = []
  ) {
    super(message)
  }
}

const clientPromise: Promise<Client> = Effect.runPromise(
  make({ baseUrl: location.origin, credentials: Credentials.browser() }).pipe(Effect.provide(FetchHttpClient.layer))
)

const codeOfError = (error: unknown): ErrorCode | undefined =>
  ErrorCodes.find((code) => error instanceof ErrorClasses[code])

const toFailure = (error: unknown): ApiFailure => {
  const code = codeOfError(error)
  if (code !== undefined) {
    const { message, details } = error as ApiError
    return new ApiFailure(ErrorStatus[code], code, message, details ?? [])
  }
  // The contract's own schemas refused the request before it left: the service would have too.
  if (ParseResult.isParseError(error)) {
    return new ApiFailure(400, "INVALID_REQUEST", ParseResult.TreeFormatter.formatErrorSync(error))
  }
  // Transport failures (the service is down) and bodies off the contract.
  const tag = typeof error === "object" && error !== null && "_tag" in error ? String(error._tag) : "Unknown"
  return new ApiFailure(0, tag === "RequestError" ? "NETWORK" : "UNEXPECTED_RESPONSE", "The service could not be reached or answered unexpectedly.")
}

/** Runs one typed-client call; a failure is thrown as an `ApiFailure`. */
export const call = async <A, E>(f: (client: Client) => Effect.Effect<A, E>): Promise<A> => {
  const client = await clientPromise
  const exit = await Effect.runPromiseExit(f(client))
  if (Exit.isSuccess(exit)) return exit.value
  const failure = Cause.failureOption(exit.cause)
  throw Option.isSome(failure) ? toFailure(failure.value) : new ApiFailure(0, "UNEXPECTED", Cause.pretty(exit.cause))
}

export const isFailure = (error: unknown, status: number): boolean => error instanceof ApiFailure && error.status === status
