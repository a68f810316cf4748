/** The SQLSTATE a database error carries (on it or a cause a few levels down), if any. */
export const sqlStateOf = (error: unknown): string | undefined => {
  let current: unknown = error
  for (let depth = 0; depth < 5 && typeof current === "object" && current !== null; depth++) {
    const code = (current as { code?: unknown }).code
    if (typeof code === "string" && /^[0-9A-Z]{5}$/.test(code)) return code
    current = (current as { cause?: unknown }).cause
  }
  return undefined
}

/** A unique constraint refused the write (SQLSTATE 23505). */
export const isUniqueViolation = (error: unknown): boolean => sqlStateOf(error) === "23505"
/** A foreign key refused the write: what it references is gone (SQLSTATE 23503). */
export const isForeignKeyViolation = (error: unknown): boolean => sqlStateOf(error) === "23503"
