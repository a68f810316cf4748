/**
 * A list page's table with the shared states: loading, denied, not found and error from the
 * query, an empty message, and one row per item marked `data-<marker>=<id>` for tests and
 * styling. The page gives only the cells of a row.
 */
import type { UseQueryResult } from "@tanstack/react-query"
import type { ReactNode } from "react"
import { Empty, QueryView } from "../States.js"

export const ResourceTable = <A extends { readonly id: string }>({ query, what, empty, headers, marker, cells }: {
  query: UseQueryResult<ReadonlyArray<A>>
  what: string
  empty: string
  /** Column titles; an empty one heads the actions column. */
  headers: ReadonlyArray<string>
  marker: string
  cells: (item: A) => ReactNode
}) => (
  <QueryView query={query} what={what}>
    {(list) => list.length === 0 ? <Empty><p>{empty}</p></Empty> : (
      <table className="list">
        <thead><tr>{headers.map((header, index) => <th key={index}>{header}</th>)}</tr></thead>
        <tbody>
          {list.map((item) => <tr key={item.id} {...{ [`data-${marker}`]: item.id }}>{cells(item)}</tr>)}
        </tbody>
      </table>
    )}
  </QueryView>
)
