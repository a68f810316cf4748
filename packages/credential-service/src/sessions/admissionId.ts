/**
 * `X-Admission-Id` (SPEC 4.8): `<13-digit Unix milliseconds>-<lowercase UUIDv4>`. An id the
 * service has not seen must be under 60 seconds old and never future-dated; a seen id is a
 * repeat whatever its age.
 */
import { CredentialServiceLimits } from "@svc/core/schema"
import { ADMISSION_ID } from "@svc/core/drivers/repo"

export type AdmissionIdProblem = "malformed" | "stale" | "future"

/** The problem with `id` as an unseen admission id at `nowMs`, if any. */
export const unseenAdmissionIdProblem = (id: string, nowMs: number): AdmissionIdProblem | undefined => {
  const match = ADMISSION_ID.exec(id)
  if (match === null) return "malformed"
  const issuedMs = Number(match[1])
  if (issuedMs > nowMs) return "future"
  if (nowMs - issuedMs >= CredentialServiceLimits.unseenAdmissionIdMaxAgeSeconds * 1000) return "stale"
  return undefined
}

export const admissionIdMessages: Readonly<Record<AdmissionIdProblem, string>> = {
  malformed: "X-Admission-Id must be a 13-digit millisecond timestamp, a hyphen and a lowercase UUIDv4",
  stale: "X-Admission-Id is 60 seconds old or older and was not seen before",
  future: "X-Admission-Id is dated in the future"
}
