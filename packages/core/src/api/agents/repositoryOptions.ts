/**
 * `GET /namespaces/{namespaceId}/agents/repository-options` (SPEC 4.4, 2.14, 8): the query, one
 * option, and the envelope whose `meta` says whether descriptions are still being fetched.
 */
import { Effect, ParseResult, Schema } from "effect"
import { CurrentRequestId, detailMessage, Limits, Meta, PatternString } from "../../schema/index.js"

const Reference = PatternString(/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/, Limits.repositoryReference.max)

/**
 * `descriptionRefs`: references separated by commas, at most 2579 characters (TOO_LONG), at
 * most 20 of them (TOO_LONG), each a well-formed reference (INVALID_FORMAT or TOO_LONG at
 * `/descriptionRefs/{index}`; an empty item is malformed) and none repeated (INVALID_VALUE at
 * the repeat). An empty value names none.
 */
export const DescriptionRefs = Schema.transform(
  Schema.String.pipe(
    Schema.maxLength(Limits.descriptionRefsQueryLength, {
      message: detailMessage("TOO_LONG", `must be at most ${Limits.descriptionRefsQueryLength} characters`)
    })
  ).annotations({
    description: `Up to ${Limits.descriptionRefs} unique repository references separated by commas, whose descriptions to fetch`
  }),
  Schema.Array(Reference).pipe(
    Schema.maxItems(Limits.descriptionRefs, { message: detailMessage("TOO_LONG", `at most ${Limits.descriptionRefs} references`) }),
    Schema.filter((refs) =>
      refs.flatMap((ref, index) =>
        refs.indexOf(ref) < index ? [{ path: [index], message: detailMessage("INVALID_VALUE", "repeats an earlier reference")() }] : []
      )
    )
  ),
  {
    strict: true,
    decode: (value) => (value === "" ? [] : value.split(",")),
    encode: (refs) => refs.join(",")
  }
)

export const RepositoryOptionsQuery = Schema.Struct({
  descriptionRefs: Schema.optional(DescriptionRefs)
})
export type RepositoryOptionsQuery = typeof RepositoryOptionsQuery.Type

/**
 * SPEC 2.14 repository option record. The bounds are documentation only (`jsonSchema`
 * annotations): the registry schema and the description normalisation guarantee them, and a
 * response encoding must never fail.
 */
export const RepositoryOption = Schema.Struct({
  repositoryRef: Schema.String.annotations({ jsonSchema: { type: "string", pattern: "^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$" } }),
  displayName: Schema.String.annotations({
    description: "owner/name; 1-200 characters, no leading or trailing whitespace or control characters",
    jsonSchema: { type: "string", minLength: 1, maxLength: 200 }
  }),
  allowedProfiles: Schema.Array(Schema.String).annotations({
    jsonSchema: { type: "array", items: { type: "string" }, minItems: 1, maxItems: Limits.repositoryAllowedProfiles.max }
  }),
  description: Schema.optionalWith(
    Schema.String.annotations({
      jsonSchema: { type: "string", minLength: Limits.repositoryDescription.min, maxLength: Limits.repositoryDescription.max }
    }),
    { exact: true }
  )
}).annotations({ identifier: "RepositoryOption" })
export type RepositoryOption = typeof RepositoryOption.Type

export interface RepositoryOptions {
  readonly options: ReadonlyArray<RepositoryOption>
  /** Some requested descriptions are still being fetched: ask again shortly. */
  readonly descriptionsPending: boolean
}

const OptionsMeta = Schema.Struct({
  ...Meta.fields,
  descriptionsPending: Schema.Boolean.annotations({
    description: "true while descriptions named by descriptionRefs are still being fetched; ask again shortly"
  })
}).annotations({ identifier: "RepositoryOptionsMeta" })

const RepositoryOptionsType = Schema.Struct({
  options: Schema.Array(RepositoryOption),
  descriptionsPending: Schema.Boolean
})

/** `{ data: [options], meta: { requestId, descriptionsPending } }`; handlers return `RepositoryOptions`. */
export const RepositoryOptionsResponse = Schema.transformOrFail(
  Schema.Struct({
    data: Schema.Array(RepositoryOption).annotations({ description: `At most ${Limits.repositoryOptionsItems} options` }),
    meta: OptionsMeta
  }).annotations({ identifier: "RepositoryOptionsResponse" }),
  Schema.typeSchema(RepositoryOptionsType),
  {
    strict: true,
    decode: (page) => ParseResult.succeed({ options: page.data, descriptionsPending: page.meta.descriptionsPending }),
    encode: (page) =>
      Effect.map(CurrentRequestId, (requestId) => ({
        data: page.options,
        meta: { requestId, descriptionsPending: page.descriptionsPending }
      }))
  }
)
