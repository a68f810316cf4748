/**
 * The `details[].code` values of SPEC 7.1, and how a schema says which one its failure means.
 *
 * HttpApi flattens a decoding failure into `{_tag, path, message}` issues before we see it, so
 * the refinement that failed (max length, pattern, ...) is lost. A schema's `message`
 * annotation survives that flattening: our schema builders annotate each refinement with a
 * message that starts with its detail code, and `errors/details.ts` reads it back.
 */
export const DetailCodes = [
  "REQUIRED",
  "UNKNOWN_FIELD",
  "INVALID_TYPE",
  "INVALID_FORMAT",
  "INVALID_VALUE",
  "TOO_LONG",
  "TOO_DEEP"
] as const
export type DetailCode = (typeof DetailCodes)[number]

/** Separates the detail code from the human text in an annotated message. */
export const DETAIL_SEPARATOR = ": "

/** A `message` annotation for a refinement whose failure means `code`. */
export const detailMessage = (code: DetailCode, text?: string) => () =>
  text === undefined ? code : `${code}${DETAIL_SEPARATOR}${text}`

/** The detail code an annotated message carries, if any. */
export const detailCodeOf = (message: string): DetailCode | undefined => {
  const head = message.split(DETAIL_SEPARATOR, 1)[0]
  return (DetailCodes as ReadonlyArray<string>).includes(head ?? "") ? (head as DetailCode) : undefined
}
