/**
 * Server state lives in one QueryClient. A 401 from any query or mutation means the session is
 * gone (expired, revoked, signed out elsewhere): the cache is dropped, so nothing of the old
 * session stays on screen, and the person is sent to sign-in with a way back.
 */
import { MutationCache, QueryCache, QueryClient } from "@tanstack/react-query"
import { ApiFailure } from "./client.js"

type OnUnauthenticated = () => void
let onUnauthenticated: OnUnauthenticated = () => {}

/**
 * The router registers how to reach sign-in once it exists. It drops the cache once, on the way
 * there: the other queries of the old page that answer 401 meanwhile find it already on sign-in
 * (clearing again would drop the sign-in page's own session read while it is under way).
 */
export const setUnauthenticatedHandler = (handler: OnUnauthenticated) => {
  onUnauthenticated = handler
}

const watch = (error: unknown) => {
  if (error instanceof ApiFailure && error.status === 401) onUnauthenticated()
}

export const queryClient: QueryClient = new QueryClient({
  queryCache: new QueryCache({ onError: watch }),
  mutationCache: new MutationCache({ onError: watch }),
  defaultOptions: {
    queries: {
      // Denied, missing and invalid stay so; retrying them only delays the answer on screen.
      retry: (count, error) => !(error instanceof ApiFailure && error.status >= 400 && error.status < 500) && count < 2,
      refetchOnWindowFocus: false,
      staleTime: 5_000
    },
    mutations: { retry: false }
  }
})
