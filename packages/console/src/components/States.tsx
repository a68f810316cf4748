/**
 * The states every page shows the same way: loading, empty, error, denied (403) and not found
 * (404). `QueryView` picks one from a query's state, so a page only renders its data.
 */
import type { UseQueryResult } from "@tanstack/react-query"
import type { ReactNode } from "react"
import { Link } from "react-router"
import { ApiFailure } from "../api/client.js"

export const Loading = ({ what }: { what: string }) => (
  <p className="state state-loading" role="status" data-state="loading">Loading {what}…</p>
)

export const Empty = ({ children }: { children: ReactNode }) => (
  <div className="state state-empty" data-state="empty">{children}</div>
)

export const Denied = ({ what }: { what: string }) => (
  <div className="state state-denied" role="alert" data-state="denied">
    <h2>Access denied</h2>
    <p>You do not have permission to see {what}.</p>
  </div>
)

export const NotFound = ({ what }: { what: string }) => (
  <div className="state state-not-found" role="alert" data-state="not-found">
    <h2>Not found</h2>
    <p>{what} does not exist, or was deleted.</p>
    <p><Link to="/namespaces">Back to Namespaces</Link></p>
  </div>
)

/** A failure in words: the SPEC code and the service's safe message, never a stack. */
export const ErrorState = ({ error, retry }: { error: unknown; retry?: () => void }) => {
  const failure = error instanceof ApiFailure ? error : new ApiFailure(0, "UNEXPECTED", "Something went wrong.")
  return (
    <div className="state state-error" role="alert" data-state="error">
      <p><strong>{failure.code}</strong>: {failure.message}</p>
      {retry !== undefined && <button type="button" onClick={retry}>Retry</button>}
    </div>
  )
}

/** An inline failure of a form or action, with the code the service answered. */
export const ActionError = ({ error }: { error: unknown }) =>
  error === null || error === undefined ? null : (
    <p className="action-error" role="alert" data-code={error instanceof ApiFailure ? error.code : "UNEXPECTED"}>
      {error instanceof ApiFailure ? `${error.code}: ${error.message}` : "Something went wrong."}
    </p>
  )

export const QueryView = <A,>({ query, what, children }: {
  query: UseQueryResult<A>
  what: string
  children: (data: A) => ReactNode
}) => {
  if (query.isPending) return <Loading what={what} />
  if (query.isError) {
    const error = query.error
    if (error instanceof ApiFailure && error.status === 403) return <Denied what={what} />
    if (error instanceof ApiFailure && error.status === 404) return <NotFound what={what} />
    return <ErrorState error={error} retry={() => void query.refetch()} />
  }
  return <>{children(query.data)}</>
}
