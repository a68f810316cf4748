/**
 * What a client command can fail with, and the exit code each failure gives (README "CLI"):
 * scripts branch on the number, people read `svc: <code>: <message>` on stderr.
 */
import { HttpClientError } from "@effect/platform"
import { SignInThrottled } from "@svc/core/api"
import { type ApiError, codeOf, ErrorClasses, type ErrorCode, type ErrorDetail, ErrorStatus } from "@svc/core/errors"
import { Data, ParseResult } from "effect"

export const ExitCode = {
  ok: 0,
  unexpected: 1,
  usage: 2,
  unauthenticated: 3,
  forbidden: 4,
  notFound: 5,
  conflict: 6,
  otherClientError: 7,
  unavailable: 8,
  deploymentFailed: 9
} as const
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode]

/** Bad flags or arguments: nothing was sent. */
export class UsageError extends Data.TaggedError("UsageError")<{ readonly message: string }> {}

/** No credential file, or it cannot be used (readable by others, unreadable). */
export class NotSignedIn extends Data.TaggedError("NotSignedIn")<{ readonly message: string }> {}

/** The credential file exists but is unsafe or unreadable: never used. */
export class CredentialFileError extends Data.TaggedError("CredentialFileError")<{ readonly message: string }> {}

/** A local input (an agent file) that the contract rejects before anything is sent. */
export class InvalidInput extends Data.TaggedError("InvalidInput")<{
  readonly message: string
  readonly details: ReadonlyArray<{ readonly path: string; readonly message: string }>
}> {}

/** `--wait` saw the deployment end `failed`. */
export class DeploymentFailed extends Data.TaggedError("DeploymentFailed")<{
  readonly code: string
  readonly message: string
}> {}

export interface Report {
  readonly exitCode: ExitCode
  readonly code: string
  readonly message: string
  readonly details: ReadonlyArray<string>
}

const byStatus = (status: number): ExitCode => {
  if (status === 401) return ExitCode.unauthenticated
  if (status === 403) return ExitCode.forbidden
  if (status === 404) return ExitCode.notFound
  if (status === 409) return ExitCode.conflict
  if (status >= 500) return ExitCode.unavailable
  if (status >= 400) return ExitCode.otherClientError
  return ExitCode.unexpected
}

const detailLine = (detail: ErrorDetail): string =>
  `${detail.path === "" ? "/" : detail.path} ${detail.code}`

const isApiError = (error: unknown): error is ApiError =>
  Object.values(ErrorClasses).some((errorClass) => error instanceof errorClass)

/** Any failure of a command as its exit code and the lines to print. */
export const report = (error: unknown): Report => {
  if (isApiError(error)) {
    const code: ErrorCode = codeOf(error)
    return {
      exitCode: byStatus(ErrorStatus[code]),
      code,
      message: error.message,
      details: (error.details ?? []).map(detailLine)
    }
  }
  // The one error class outside the SPEC 7.1 table: 429 with code UNAUTHENTICATED (SPEC 5.4).
  if (error instanceof SignInThrottled) {
    return { exitCode: ExitCode.otherClientError, code: "UNAUTHENTICATED", message: `${error.message} (HTTP 429)`, details: [] }
  }
  if (error instanceof UsageError) return { exitCode: ExitCode.usage, code: "USAGE", message: error.message, details: [] }
  if (error instanceof NotSignedIn) {
    return { exitCode: ExitCode.unauthenticated, code: "NOT_SIGNED_IN", message: error.message, details: [] }
  }
  if (error instanceof CredentialFileError) {
    return { exitCode: ExitCode.unauthenticated, code: "CREDENTIALS_UNUSABLE", message: error.message, details: [] }
  }
  if (error instanceof InvalidInput) {
    return {
      exitCode: ExitCode.otherClientError,
      code: "INVALID_REQUEST",
      message: error.message,
      details: error.details.map((d) => `${d.path} ${d.message}`)
    }
  }
  if (error instanceof DeploymentFailed) {
    return { exitCode: ExitCode.deploymentFailed, code: error.code, message: error.message, details: [] }
  }
  if (HttpClientError.isHttpClientError(error)) {
    if (error._tag === "RequestError") {
      return { exitCode: ExitCode.unavailable, code: "UNREACHABLE", message: `cannot reach ${error.request.url}`, details: [] }
    }
    const status = error.response.status
    return { exitCode: byStatus(status), code: `HTTP_${status}`, message: `unexpected response from ${error.request.url}`, details: [] }
  }
  if (ParseResult.isParseError(error)) {
    return { exitCode: ExitCode.unexpected, code: "UNEXPECTED_RESPONSE", message: "a request or a response did not match the contract", details: [] }
  }
  return { exitCode: ExitCode.unexpected, code: "UNEXPECTED", message: "an unexpected failure", details: [] }
}
