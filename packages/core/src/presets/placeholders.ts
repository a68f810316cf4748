/**
 * The `{{ vars.<name> }}` placeholders of Preset templates (DESIGN §7). A string is read once,
 * left to right; every `{{` must open a well-formed reference, so a typo is an admission error
 * rather than text kept as it is.
 */

/** A variable name: a letter or `_`, then up to 63 letters, digits or `_`. */
export const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/

const OPEN = "{{"
/** `{{`, optional blanks, `vars.<name>`, optional blanks, `}}`, anchored where a `{{` starts. */
const REFERENCE = /\{\{[ \t]*vars\.([A-Za-z_][A-Za-z0-9_]{0,63})[ \t]*\}\}/y

/** A piece of a templated string: literal text or a variable reference. */
export type Segment = { readonly text: string } | { readonly variable: string }

/** A string's reading: its segments, or the offset of the first `{{` that opens no reference. */
export type Parsed =
  | { readonly _tag: "Parsed"; readonly segments: ReadonlyArray<Segment> }
  | { readonly _tag: "Malformed"; readonly offset: number }

export const parseTemplateString = (value: string): Parsed => {
  const segments: Array<Segment> = []
  let position = 0
  for (;;) {
    const open = value.indexOf(OPEN, position)
    if (open === -1) break
    REFERENCE.lastIndex = open
    const match = REFERENCE.exec(value)
    if (match === null) return { _tag: "Malformed", offset: open }
    if (open > position) segments.push({ text: value.slice(position, open) })
    segments.push({ variable: match[1]! })
    position = REFERENCE.lastIndex
  }
  if (position < value.length) segments.push({ text: value.slice(position) })
  return { _tag: "Parsed", segments }
}

/** True when the string contains `{{`: it is a template, checked by the placeholder rules. */
export const isTemplated = (value: string): boolean => value.includes(OPEN)

/** The variable a string stands for when it is exactly one placeholder, else undefined. */
export const wholeReference = (segments: ReadonlyArray<Segment>): string | undefined => {
  const only = segments.length === 1 ? segments[0]! : undefined
  return only !== undefined && "variable" in only ? only.variable : undefined
}

/**
 * Calls `onString` for every string value and `onKey` for every object key under `value`, in
 * document order and iteratively (templates are bounded in depth, but the walk never relies on it).
 */
export const walkJson = (
  value: unknown,
  onString: (text: string, path: ReadonlyArray<string | number>) => void,
  onKey: (key: string, path: ReadonlyArray<string | number>) => void = () => {}
): void => {
  const stack: Array<{ readonly value: unknown; readonly path: ReadonlyArray<string | number> }> = [{ value, path: [] }]
  while (stack.length > 0) {
    const { path, value: current } = stack.pop()!
    if (typeof current === "string") onString(current, path)
    if (typeof current !== "object" || current === null) continue
    const entries: Array<[string | number, unknown]> = Array.isArray(current)
      ? current.map((item, index) => [index, item])
      : Object.entries(current)
    for (const [key] of entries) if (typeof key === "string") onKey(key, [...path, key])
    for (const [key, item] of entries.reverse()) stack.push({ value: item, path: [...path, key] })
  }
}
