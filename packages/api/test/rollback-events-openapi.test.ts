/**
 * The rollback and deployment-event extensions in the OpenAPI document: each operation carries
 * `x-svc-extension: true`, the event stream is `text/event-stream` with its 429, and the revision
 * resource has the optional, nullable `rolledBackFrom`. SPEC operations carry no such flag.
 */
import { describe, expect, it } from "@effect/vitest"
import { SvcApi } from "@svc/api"
import { documentOf } from "../../../testing/openapiDoc.js"

const doc = documentOf(SvcApi)
const agent = "/namespaces/{namespaceId}/agents/{agentId}"

describe("rollback and deployment events in OpenAPI", () => {
  it("the redeploy operation: an extension answering 202 with a revision", () => {
    const redeploy = doc.paths[`${agent}/revisions/{revisionId}/redeploy`].post
    expect(redeploy["x-svc-extension"]).toBe(true)
    expect(redeploy.requestBody).toBeUndefined()
    expect(redeploy.responses["202"]?.content?.["application/json"]?.schema).toEqual({ $ref: "#/components/schemas/AgentRevisionResponse" })
    expect(Object.keys(redeploy.responses)).toEqual(expect.arrayContaining(["401", "403", "404", "409"]))
  })

  it("the events operation: an extension streaming text/event-stream, 429 past the per-caller bound", () => {
    const events = doc.paths[`${agent}/deployments/{deploymentId}/events`].get
    expect(events["x-svc-extension"]).toBe(true)
    expect(Object.keys(events.responses["200"]?.content ?? {})).toEqual(["text/event-stream"])
    expect(events.responses["429"]?.content?.["application/json"]?.schema).toHaveProperty("allOf", [{ $ref: "#/components/schemas/DeploymentStreamLimit" }])
    expect(Object.keys(events.responses)).toEqual(expect.arrayContaining(["401", "403", "404"]))
  })

  it("rolledBackFrom is optional and nullable; SPEC operations are not flagged", () => {
    const revision = doc.components.schemas.AgentRevision
    expect(revision?.["required"]).not.toContain("rolledBackFrom")
    expect(revision?.["properties"]).toHaveProperty("rolledBackFrom", { anyOf: [{ $ref: "#/components/schemas/RevisionId" }, { type: "null" }] })
    expect(doc.paths[`${agent}/deploy`].post["x-svc-extension"]).toBeUndefined()
    expect(doc.paths[`${agent}/deployments/{deploymentId}`].get["x-svc-extension"]).toBeUndefined()
  })
})
