/**
 * Repository descriptions for the repository options (SPEC 4.4, 2.14; DESIGN §12): the API asks
 * the credential service, which alone holds the App key, to read `GET /repos/{owner}/{repo}`
 * with a metadata-only installation token. A control request names at most
 * `DESCRIBE_BATCH` references so the answer stays within the 16 KiB control body limit.
 */
import { Schema } from "effect"
import { detailMessage } from "../../schema/detailCodes.js"
import { Limits } from "../../schema/limits.js"
import { PatternString, RequestBody } from "../../schema/strings.js"

/** References per control request: 8 descriptions of 512 characters stay under 16 KiB of JSON. */
export const DESCRIBE_BATCH = 8

const Reference = PatternString(/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/, Limits.repositoryReference.max)

export const DescribeRepositoriesRequest = RequestBody({
  repositoryRefs: Schema.Array(Reference).pipe(
    Schema.minItems(1, { message: detailMessage("INVALID_VALUE", "must name at least one reference") }),
    Schema.maxItems(DESCRIBE_BATCH, { message: detailMessage("TOO_LONG", `at most ${DESCRIBE_BATCH} references`) }),
    Schema.filter((refs) => new Set(refs).size === refs.length, { message: detailMessage("INVALID_VALUE", "references must be unique") })
  )
}).annotations({ identifier: "DescribeRepositoriesRequest" })
export type DescribeRepositoriesRequest = typeof DescribeRepositoriesRequest.Type

/** One answer per requested reference; `null`: the registry or the code host has no description. */
export const RepositoryDescriptions = Schema.Struct({
  repositories: Schema.Array(Schema.Struct({ repositoryRef: Schema.String, description: Schema.NullOr(Schema.String) }))
}).annotations({ identifier: "RepositoryDescriptions" })
export type RepositoryDescriptions = typeof RepositoryDescriptions.Type

const CONTROL = /[\u0000-\u001f\u007f-\u009f]+/g

/**
 * A code host's description as an option shows it (SPEC 2.14: 1-512 characters): control
 * characters become spaces, surrounding whitespace goes, and it is cut at 512 characters
 * without splitting a surrogate pair; nothing left (or no description): `null`.
 */
export const optionDescription = (raw: unknown): string | null => {
  if (typeof raw !== "string") return null
  const cleaned = raw.replace(CONTROL, " ").trim()
  if (cleaned.length === 0) return null
  const max = Limits.repositoryDescription.max
  if (cleaned.length <= max) return cleaned
  const cut = /[\ud800-\udbff]/.test(cleaned[max - 1] ?? "") ? max - 1 : max
  const trimmed = cleaned.slice(0, cut).trimEnd()
  return trimmed.length === 0 ? null : trimmed
}
