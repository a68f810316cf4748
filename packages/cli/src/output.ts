/**
 * What commands print: `--json` gives the unwrapped `data` as one JSON document (dates as the
 * service sends them, ISO 8601), otherwise aligned tables or `key  value` lines.
 */
import { Console, Effect } from "effect"

export type Cell = string | number | boolean | Date | null | undefined

const text = (cell: Cell): string => {
  if (cell === null || cell === undefined) return "-"
  if (cell instanceof Date) return cell.toISOString()
  return String(cell)
}

/** Columns padded to their widest cell; the last column is not padded. */
export const table = (headers: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<Cell>>): string => {
  const cells = [headers, ...rows.map((row) => row.map(text))]
  const widths = headers.map((_, column) => Math.max(...cells.map((row) => (row[column] ?? "").length)))
  return cells
    .map((row) => row.map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column]!))).join("  ").trimEnd())
    .join("\n")
}

/** One `key  value` line per field, keys aligned. */
export const fields = (entries: ReadonlyArray<readonly [string, Cell]>): string => {
  const width = Math.max(...entries.map(([key]) => key.length))
  return entries.map(([key, value]) => `${key.padEnd(width)}  ${text(value)}`).join("\n")
}

export const printJson = (data: unknown): Effect.Effect<void> => Console.log(JSON.stringify(data, null, 2))

/** The JSON document with `--json`, the human rendering otherwise. */
export const print = <A>(json: boolean, data: A, human: (data: A) => string): Effect.Effect<void> =>
  json ? printJson(data) : Console.log(human(data))
