import { jsonPointer } from "../errors/index.js"

/**
 * The JSON Pointer of the first value nested deeper than `maxDepth` containers, or undefined.
 * Iterative, so a hostile body cannot overflow the stack.
 */
export const firstTooDeep = (value: unknown, maxDepth: number): string | undefined => {
  const stack: Array<{ readonly value: unknown; readonly depth: number; readonly path: ReadonlyArray<string | number> }> = [
    { value, depth: 0, path: [] }
  ]
  while (stack.length > 0) {
    const { depth, path, value: current } = stack.pop()!
    if (typeof current !== "object" || current === null) continue
    const level = depth + 1
    if (level > maxDepth) return jsonPointer(path)
    if (Array.isArray(current)) {
      current.forEach((item, index) => stack.push({ value: item, depth: level, path: [...path, index] }))
    } else {
      for (const [key, item] of Object.entries(current)) stack.push({ value: item, depth: level, path: [...path, key] })
    }
  }
  return undefined
}
