/**
 * The OpenAPI document as tests read it: the parts they assert on, typed, instead of `any`.
 * Every level a test indexes by a name it chose may be absent, so reads go through `?.` and the
 * assertion says what was missing.
 */
import type { HttpApi } from "@effect/platform"
import { openApiDocument } from "@svc/core/http"

export interface DocMedia {
  readonly schema?: unknown
}

export interface DocResponse {
  readonly description?: string
  readonly headers?: Readonly<Record<string, DocMedia>>
  readonly content?: Readonly<Record<string, DocMedia>>
}

export interface DocOperation {
  readonly operationId?: string
  readonly summary?: string
  readonly description?: string
  readonly parameters?: ReadonlyArray<{ readonly name: string; readonly in: string; readonly [key: string]: unknown }>
  readonly requestBody?: { readonly content?: Readonly<Record<string, DocMedia>> }
  readonly responses: Readonly<Record<string, DocResponse>>
  /** The credentials the operation accepts: one requirement object per alternative. */
  readonly security?: ReadonlyArray<Readonly<Record<string, ReadonlyArray<string>>>>
  readonly [extension: `x-${string}`]: unknown
}

export interface OpenApiDoc {
  readonly openapi: string
  readonly info: { readonly title: string; readonly version: string }
  readonly paths: Readonly<Record<string, Readonly<Record<string, DocOperation>>>>
  readonly components: {
    readonly schemas: Readonly<Record<string, Readonly<Record<string, unknown>>>>
    readonly securitySchemes?: Readonly<Record<string, Readonly<Record<string, unknown>>>>
  }
}

/** The document our contract library generates for `api` (the shape above is what OpenAPI 3.1 guarantees). */
export const documentOf = (api: HttpApi.HttpApi.Any): OpenApiDoc => openApiDocument(api) as unknown as OpenApiDoc
