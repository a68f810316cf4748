/**
 * An error response whose status the endpoint does not declare: HttpApiClient yields a
 * `ResponseError`; the typed client turns a SPEC 7.1 envelope into its tagged class and leaves
 * anything else as it was. A fake transport answers, so no server is needed.
 */
import { describe, expect, it } from "@effect/vitest"
import { HttpClient, HttpClientError, HttpClientResponse } from "@effect/platform"
import { Credentials, make } from "@svc/core/client"
import { ResourceConflict } from "@svc/core/errors"
import { Effect, Layer } from "effect"

const answering = (status: number, body: string) =>
  Layer.succeed(
    HttpClient.HttpClient,
    HttpClient.make((request) =>
      Effect.succeed(HttpClientResponse.fromWeb(request, new Response(body, { status, headers: { "content-type": "application/json" } })))
    )
  )

const listNamespaces = Effect.flatMap(
  make({ baseUrl: "http://127.0.0.1:1", credentials: Credentials.none }),
  (client) => client.namespaces.list({ urlParams: {} })
)

const envelope = {
  error: { code: "RESOURCE_CONFLICT", message: "not declared on this endpoint", details: [{ code: "INVALID_VALUE", path: "/name" }] },
  meta: { requestId: "req_00000000-0000-4000-8000-000000000000" }
}

describe("typed client errors", () => {
  it.effect("an undeclared status with our envelope is its tagged class", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(listNamespaces.pipe(Effect.provide(answering(409, JSON.stringify(envelope)))))
      expect(error).toBeInstanceOf(ResourceConflict)
      expect(error).toMatchObject({ message: "not declared on this endpoint", details: [{ code: "INVALID_VALUE", path: "/name" }] })
    }))

  it.effect("anything else stays the ResponseError", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(listNamespaces.pipe(Effect.provide(answering(409, "<html>proxy error</html>"))))
      expect(HttpClientError.isHttpClientError(error) && error._tag === "ResponseError").toBe(true)
      const unknownCode = yield* Effect.flip(
        listNamespaces.pipe(Effect.provide(answering(409, JSON.stringify({ ...envelope, error: { code: "TEAPOT", message: "x" } }))))
      )
      expect(HttpClientError.isHttpClientError(unknownCode)).toBe(true)
    }))
})
