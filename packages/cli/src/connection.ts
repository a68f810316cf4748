/**
 * A typed client (`@svc/core/client`) for the stored credentials: a service key is sent as
 * `x-api-key`; a session's cookies go into a jar the client keeps (with the trusted `Origin`
 * for mutations, SPEC 5.3), and a cookie the service renews is saved back for the next run.
 */
import { Cookies, FetchHttpClient } from "@effect/platform"
import { type Client, Credentials, make } from "@svc/core/client"
import { Effect, Ref } from "effect"
import { type StoredCredentials, requireCredentials, writeCredentials } from "./credentialStore.js"

export interface Connection {
  readonly client: Client
  readonly stored: StoredCredentials
  readonly file: string
}

export const cookiesFrom = (record: Readonly<Record<string, string>>): Cookies.Cookies =>
  Cookies.fromIterable(Object.entries(record).map(([name, value]) => Cookies.unsafeMakeCookie(name, value)))

/** A client for `baseUrl` with the given credentials, over `fetch`. */
export const clientFor = (baseUrl: string, credentials: Credentials): Effect.Effect<Client> =>
  make({ baseUrl, credentials }).pipe(Effect.provide(FetchHttpClient.layer))

/** Runs `use` with a client for the stored credentials. */
export const withConnection = <A, E, R>(file: string, use: (connection: Connection) => Effect.Effect<A, E, R>) =>
  Effect.gen(function* () {
    const stored = yield* requireCredentials(file)
    if (stored.kind === "key") {
      const client = yield* clientFor(stored.url, Credentials.serviceKey(stored.key))
      return yield* use({ client, stored, file })
    }
    const jar = yield* Ref.make(cookiesFrom(stored.cookies))
    const client = yield* clientFor(stored.url, Credentials.cookieJar({ jar }))
    return yield* use({ client, stored, file }).pipe(
      Effect.ensuring(
        Effect.gen(function* () {
          const after = Cookies.toRecord(yield* Ref.get(jar))
          if (Object.keys(after).length > 0 && JSON.stringify(after) !== JSON.stringify(stored.cookies)) {
            yield* writeCredentials(file, { ...stored, cookies: after }).pipe(Effect.ignore)
          }
        })
      )
    )
  })
