/**
 * Sign-in with email and password, and the external providers the service has on
 * (`GET /api/auth/providers`): start → the provider → callback → back here → result.
 */
import { type FormEvent, useState } from "react"
import { Navigate, useSearchParams } from "react-router"
import { type Provider, startExternal, useProviders, useSession, useSignIn } from "../api/session.js"
import { ActionError, Loading } from "../components/States.js"

const PROVIDER_LABELS: Record<Provider, string> = { codehost: "Sign in with the code host", idprovider: "Sign in with the identity provider" }

/** Only a path inside the console may be a destination: never an outside URL. */
const safeNext = (next: string | null) => next !== null && /^\/(?!\/)/.test(next) ? next : "/namespaces"

export const SignInPage = () => {
  const [params] = useSearchParams()
  const session = useSession()
  const providers = useProviders()
  const signIn = useSignIn()
  const [email, setEmail] = useState("")
  const [password, setPassword] = useState("")
  const [external, setExternal] = useState<unknown>(null)
  const next = safeNext(params.get("next"))

  if (session.isPending) return <Loading what="your session" />
  if (session.data !== null && session.data !== undefined) return <Navigate to={next} replace />

  const submit = (event: FormEvent) => {
    event.preventDefault()
    signIn.mutate({ email, password })
  }
  const enabled = providers.data === undefined ? [] : (["codehost", "idprovider"] as const).filter((p) => providers.data[p])

  return (
    <main className="signin">
      <h1>Sign in</h1>
      {params.get("error") === "sign_in_failed" && <p className="action-error" role="alert">External sign-in did not complete.</p>}
      <form onSubmit={submit} className="form">
        <label>Email<input type="email" name="email" autoComplete="username" required value={email} onChange={(e) => setEmail(e.target.value)} /></label>
        <label>Password<input type="password" name="password" autoComplete="current-password" required minLength={12} maxLength={128} value={password} onChange={(e) => setPassword(e.target.value)} /></label>
        <button type="submit" disabled={signIn.isPending}>{signIn.isPending ? "Signing in…" : "Sign in"}</button>
        <ActionError error={signIn.error} />
      </form>
      {enabled.length > 0 && (
        <section className="providers" aria-label="Other ways to sign in">
          {enabled.map((provider) => (
            <button key={provider} type="button" className="secondary" onClick={() => startExternal(provider).catch(setExternal)}>
              {PROVIDER_LABELS[provider]}
            </button>
          ))}
          <ActionError error={external} />
        </section>
      )}
    </main>
  )
}
