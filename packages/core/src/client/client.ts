/**
 * The typed client of the control plane (DESIGN §10): `HttpApiClient.make(SvcApi)` with a base
 * URL, credentials, success envelopes unwrapped by the contract's own `Envelope` schemas, and
 * error responses as the tagged errors of `@svc/core/errors`. The transport is any
 * `HttpClient`; `layerFetch` uses `fetch`, which Node and browsers both have.
 */
import { FetchHttpClient, type HttpApi, HttpApiClient, type HttpClient } from "@effect/platform"
import { Context, Effect, Layer } from "effect"
import { SvcApi } from "../api/svcApi.js"
import type { ApiError } from "../errors/index.js"
import { type Credentials, transportFor } from "./credentials.js"
import { undeclaredErrorsAsTagged } from "./errors.js"

type Api = typeof SvcApi
type Groups = Api extends HttpApi.HttpApi<infer _Id, infer G, infer _E, infer _R> ? G : never
type DeclaredErrors = Api extends HttpApi.HttpApi<infer _Id, infer _G, infer E, infer _R> ? E : never

/**
 * Every group of `SvcApi` as methods (`client.namespaces.list({ urlParams: {} })`). Each method
 * fails with its declared errors, and with any other SPEC 7.1 error class the service answers
 * (see `errors.ts`), an `HttpClientError` (transport), or a `ParseError` (a body that does not
 * match the contract).
 */
export type Client = HttpApiClient.Client<Groups, DeclaredErrors | ApiError, never>

export interface ClientOptions {
  /** Where the service is served, e.g. `http://127.0.0.1:8080`; in a browser, `location.origin`. */
  readonly baseUrl: string | URL
  readonly credentials: Credentials
}

export class SvcClient extends Context.Tag("@svc/core/client/SvcClient")<SvcClient, Client>() {}

/** A client over the `HttpClient` in context. */
export const make = (options: ClientOptions): Effect.Effect<Client, never, HttpClient.HttpClient> =>
  Effect.flatMap(transportFor(options.credentials, options.baseUrl), (transformClient) =>
    HttpApiClient.make(SvcApi, {
      baseUrl: options.baseUrl,
      transformClient,
      transformResponse: undeclaredErrorsAsTagged
    }) as Effect.Effect<Client, never, HttpClient.HttpClient>)

export const layer = (options: ClientOptions): Layer.Layer<SvcClient, never, HttpClient.HttpClient> =>
  Layer.effect(SvcClient, make(options))

/** `layer` over `fetch` (FetchHttpClient). */
export const layerFetch = (options: ClientOptions): Layer.Layer<SvcClient> =>
  layer(options).pipe(Layer.provide(FetchHttpClient.layer))
