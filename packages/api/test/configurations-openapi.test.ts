/**
 * The Configuration fields' SPEC 2.8 / part 8 bounds as the OpenAPI document states them:
 * `generation` (and a revision's `configurationGeneration`, SPEC 2.6) is an integer
 * 1-9007199254740991, and `secretBindings` holds at most 64 entries.
 */
import { describe, expect, it } from "@effect/vitest"
import { SvcApi } from "@svc/api"
import { Limits } from "@svc/core/schema"
import { documentOf } from "../../../testing/openapiDoc.js"

const schemas = documentOf(SvcApi).components.schemas as Readonly<Record<string, { readonly properties?: Readonly<Record<string, unknown>> }>>

describe("Configurations in the OpenAPI document", () => {
  it("documents generation as an integer 1-9007199254740991, on the Configuration and on revisions", () => {
    const bounded = { type: "integer", minimum: 1, maximum: Limits.configurationGeneration }
    expect(schemas["Configuration"]?.properties?.["generation"]).toMatchObject(bounded)
    expect(schemas["AgentRevision"]?.properties?.["configurationGeneration"]).toMatchObject(bounded)
    expect(Limits.configurationGeneration).toBe(9007199254740991)
  })

  it("documents at most 64 secretBindings on create and PATCH", () => {
    expect(schemas["SecretBindings"]).toMatchObject({ type: "object", maxProperties: 64 })
    for (const request of ["CreateConfigurationRequest", "UpdateConfigurationRequest"]) {
      expect(schemas[request]?.properties?.["secretBindings"], request).toEqual({ $ref: "#/components/schemas/SecretBindings" })
    }
  })
})
