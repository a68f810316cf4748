/** Session, sign-in and sign-out (SPEC 4.1, 5.2-5.3). The cookie is set and sent by the browser. */
import { useMutation, useQuery } from "@tanstack/react-query"
import { call, isFailure } from "./client.js"
import { keys } from "./keys.js"
import { queryClient } from "./queryClient.js"

/** Drops everything cached, then reads the new session (the page waiting on it moves on). */
const freshSession = () => {
  queryClient.removeQueries({ predicate: (query) => query.queryKey[0] !== keys.session[0] })
  return queryClient.resetQueries({ queryKey: keys.session })
}

/** A session the service no longer accepts (expired, revoked: 401) is no session. */
export const useSession = () =>
  useQuery({
    queryKey: keys.session,
    queryFn: () => call((c) => c.authSessions.session()).catch((error: unknown) => {
      if (isFailure(error, 401)) return null
      throw error
    }),
    staleTime: 30_000
  })

export const useProviders = () =>
  useQuery({ queryKey: keys.providers, queryFn: () => call((c) => c.authSessions.providers()), staleTime: Infinity })

export const useSignIn = () =>
  useMutation({
    mutationFn: (payload: { email: string; password: string }) => call((c) => c.authSessions.signInEmail({ payload })),
    // A new identity: nothing cached under the previous one may be shown.
    onSuccess: () => freshSession()
  })

export const useSignOut = () =>
  useMutation({
    mutationFn: () => call((c) => c.authSessions.signOut()),
    // Signed out or not (a 401 means the session was already gone), the cache is dropped.
    onSettled: () => queryClient.clear()
  })

export type Provider = "codehost" | "idprovider"

const ATTEMPT = "svc.console.signInAttempt"

/** Starts an external sign-in: remembers the attempt for the callback's return, then leaves. */
export const startExternal = async (provider: Provider) => {
  const started = await call((c) => provider === "codehost" ? c.externalSignIn.codehostStart() : c.externalSignIn.idproviderStart())
  sessionStorage.setItem(ATTEMPT, JSON.stringify({ provider, attemptId: started.attemptId }))
  location.assign(started.url)
}

/** After the callback's redirect: redeems the attempt once; nothing to do when none is pending. */
export const finishExternal = async (): Promise<boolean> => {
  const pending = sessionStorage.getItem(ATTEMPT)
  if (pending === null) return false
  sessionStorage.removeItem(ATTEMPT)
  const { provider, attemptId } = JSON.parse(pending) as { provider: Provider; attemptId: string }
  const payload = { attemptId }
  await call((c) => provider === "codehost" ? c.externalSignIn.codehostResult({ payload }) : c.externalSignIn.idproviderResult({ payload }))
  await freshSession()
  return true
}
