/**
 * A tiny browser consumer of the contract and the typed client, bundled by
 * browser-client.test.ts for `platform: "browser"`: it signs in as the development
 * administrator (the browser keeps the cookie and sends its Origin), lists the Namespaces and
 * writes their names into the page.
 */
import { Namespace } from "@svc/core/api"
import { Credentials, layerFetch, SvcClient } from "@svc/core/client"
import { Effect, Schema } from "effect"

// The test type-checks without the DOM library; these are the few DOM members used here.
interface Element {
  textContent: string | null
  setAttribute(name: string, value: string): void
}
declare const document: { getElementById(id: string): Element | null }
declare const location: { readonly origin: string; readonly hash: string }

const [email, password] = decodeURIComponent(location.hash.slice(1)).split("\n")

const program = Effect.gen(function* () {
  const client = yield* SvcClient
  yield* client.authSessions.signInEmail({ payload: { email: email ?? "", password: password ?? "" } })
  const namespaces = yield* client.namespaces.list({ urlParams: {} })
  // The contract's own schema, at run time in the page: the envelope is gone, domain values remain.
  const isNamespace = Schema.is(Namespace)
  return namespaces.map((namespace) => isNamespace(namespace) ? namespace.name : "(not a Namespace)").sort()
})

const show = (state: string, text: string) => {
  const result = document.getElementById("result")
  if (result === null) return
  result.textContent = text
  result.setAttribute("data-state", state)
}

Effect.runPromise(
  program.pipe(
    Effect.provide(layerFetch({ baseUrl: location.origin, credentials: Credentials.browser() })),
    Effect.match({
      onFailure: (error) => show("failed", `${error._tag}: ${"message" in error ? String(error.message) : ""}`),
      onSuccess: (names) => show("done", names.join(", "))
    })
  )
)
