import { HttpApi, OpenApi } from "@effect/platform"
import { refineDocument } from "./openapi.js"

export const API_TITLE = "Agent control-plane API (development)"
export const API_VERSION = "0.1.0"

/** Titles, versions and refines the OpenAPI document of an API (SPEC 9). */
export const documented = <A extends HttpApi.HttpApi.Any>(api: A): A =>
  (api as unknown as HttpApi.HttpApi.AnyWithProps).annotateContext(
    OpenApi.annotations({ title: API_TITLE, version: API_VERSION, transform: refineDocument })
  ) as unknown as A
