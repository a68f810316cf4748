/**
 * DESIGN §18 extensions in the OpenAPI document: the audit operations and the
 * `Idempotency-Key` header are marked `x-svc-extension: true`; every operation that accepts the
 * header documents it, and no other operation does.
 */
import { describe, expect, it } from "@effect/vitest"
import { SvcApi } from "@svc/api"
import { openApiDocument } from "@svc/core/http"

interface Operation {
  readonly operationId?: string
  readonly parameters?: ReadonlyArray<{ readonly name: string; readonly in: string; readonly [key: string]: unknown }>
  readonly [key: string]: unknown
}

const doc = openApiDocument(SvcApi) as { paths: Record<string, Record<string, Operation>> }

const IDEMPOTENT = [
  "post /namespaces",
  "post /namespaces/{namespaceId}/secrets",
  "post /namespaces/{namespaceId}/configurations",
  "post /namespaces/{namespaceId}/presets",
  "post /namespaces/{namespaceId}/agents",
  "post /namespaces/{namespaceId}/agents/provision",
  "post /namespaces/{namespaceId}/agents/{agentId}/deploy",
  "post /namespaces/{namespaceId}/agents/{agentId}/stop",
  "post /namespaces/{namespaceId}/agents/{agentId}/revisions/{revisionId}/redeploy",
  "post /namespaces/{namespaceId}/iam/roles",
  "post /namespaces/{namespaceId}/iam/access-bindings",
  "post /iam/service-principals",
  "post /namespaces/{namespaceId}/iam/service-principals",
  "post /api/auth/accounts",
  "post /api/auth/service-keys",
  // --- service accounts (issue 13) ---
  "post /namespaces/{namespaceId}/service-accounts",
  // --- end service accounts ---
  // credential-sources
  "post /namespaces/{namespaceId}/credential-sources"
  // end credential-sources
].sort()

const operations = Object.entries(doc.paths).flatMap(([path, methods]) =>
  Object.entries(methods).map(([method, operation]) => ({ route: `${method} ${path}`, operation })))

describe("extensions of SPEC 0.1.0 in the OpenAPI document", () => {
  it("the audit operations are marked x-svc-extension and document their query", () => {
    for (const path of ["/audit", "/namespaces/{namespaceId}/audit"]) {
      const operation = doc.paths[path]!["get"]!
      expect(operation["x-svc-extension"]).toBe(true)
      const query = operation.parameters!.filter((p) => p.in === "query").map((p) => p.name).sort()
      expect(query).toEqual(["actor", "cursor", "kind", "limit", "outcome", "resourceId", "resourceKind", "since", "until"])
    }
  })

  it("exactly the create, deploy, stop and redeploy operations document Idempotency-Key, marked as an extension", () => {
    const documented = operations
      .filter(({ operation }) => (operation.parameters ?? []).some((p) => p.name === "Idempotency-Key"))
      .map(({ route }) => route)
      .sort()
    expect(documented).toEqual(IDEMPOTENT)
    for (const { route, operation } of operations.filter((o) => IDEMPOTENT.includes(o.route))) {
      const header = operation.parameters!.find((p) => p.name === "Idempotency-Key")
      expect(header, route).toEqual({
        name: "Idempotency-Key",
        in: "header",
        required: false,
        description: expect.stringContaining("Extension of SPEC 0.1.0"),
        schema: { type: "string", minLength: 1, maxLength: 255, pattern: "^[\\x21-\\x7E]+$" },
        "x-svc-extension": true
      })
    }
  })

  it("the answers a replay repeats document Idempotent-Replayed; a service key's success never is one", () => {
    const replayed = (route: string, status: string) => {
      const [method, path] = route.split(" ") as [string, string]
      const headers = (doc.paths[path]![method]!["responses"] as Record<string, { headers?: Record<string, unknown> }>)[status]!.headers ?? {}
      return headers["Idempotent-Replayed"]
    }
    const header = {
      description: expect.stringContaining("Extension of SPEC 0.1.0"),
      schema: { type: "string", enum: ["true"] },
      "x-svc-extension": true
    }
    expect(replayed("post /namespaces/{namespaceId}/secrets", "201")).toEqual(header)
    expect(replayed("post /namespaces/{namespaceId}/agents/{agentId}/deploy", "202")).toEqual(header)
    expect(replayed("post /namespaces/{namespaceId}/secrets", "400")).toEqual(header)
    expect(replayed("post /namespaces/{namespaceId}/secrets", "409")).toBeUndefined()
    expect(replayed("post /api/auth/service-keys", "201")).toBeUndefined()
    expect(replayed("post /api/auth/service-keys", "400")).toEqual(header)
    expect(replayed("get /namespaces/{namespaceId}/secrets", "200")).toBeUndefined()
  })

  it("no SPEC operation is marked as an extension", () => {
    const marked = operations.filter(({ operation }) => operation["x-svc-extension"] === true).map(({ route }) => route).sort()
    expect(marked).toEqual([
      "get /audit",
      "get /namespaces/{namespaceId}/agents/{agentId}/deployments/{deploymentId}/events",
      "get /namespaces/{namespaceId}/agents/{agentId}/permissions",
      "get /namespaces/{namespaceId}/audit",
      "get /namespaces/{namespaceId}/permissions",
      "get /permissions",
      "post /namespaces/{namespaceId}/agents/{agentId}/revisions/{revisionId}/redeploy"
    ])
  })
})
