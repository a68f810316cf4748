import { HttpApi, OpenApi } from "@effect/platform"
import { refineDocument } from "./openapi.js"
import { securityOf, withSecurity } from "./security.js"

export const API_TITLE = "Agent control-plane API (development)"
export const API_VERSION = "0.1.0"

/** Titles, versions and refines the OpenAPI document of an API (SPEC 9), with its credentials (SPEC 5.1, 5.2). */
export const documented = <A extends HttpApi.HttpApi.Any>(api: A): A => {
  const props = api as unknown as HttpApi.HttpApi.AnyWithProps
  const secured = withSecurity(securityOf(props))
  return props.annotateContext(
    OpenApi.annotations({ title: API_TITLE, version: API_VERSION, transform: (spec) => secured(refineDocument(spec)) })
  ) as unknown as A
}
