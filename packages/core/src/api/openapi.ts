import { HttpApi, OpenApi } from "@effect/platform"

type Document = Record<string, unknown> & {
  paths?: Record<string, Record<string, { responses?: Record<string, Record<string, unknown>> }>>
  components?: { schemas?: Record<string, unknown>; headers?: Record<string, unknown> }
}

const REQUEST_ID_HEADER = {
  description: "The request id, also in meta.requestId",
  schema: { type: "string", pattern: "^req_[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$" }
}
const ALLOW_HEADER = { description: "The methods this path accepts", schema: { type: "string" } }

/**
 * What HttpApi cannot express by itself: the `x-request-id` header on every response, `Allow`
 * on 405, and no trace of HttpApiDecodeError (our API-level middleware turns it into
 * INVALID_REQUEST before anything is sent).
 */
export const refineDocument = (spec: Record<string, unknown>): Record<string, unknown> => {
  const doc = structuredClone(spec) as Document
  doc.components = { ...doc.components, headers: { ...(doc.components?.headers ?? {}), RequestId: REQUEST_ID_HEADER, Allow: ALLOW_HEADER } }
  for (const operations of Object.values(doc.paths ?? {})) {
    for (const operation of Object.values(operations)) {
      for (const [status, response] of Object.entries(operation.responses ?? {})) {
        const headers = (response.headers ?? {}) as Record<string, unknown>
        headers["x-request-id"] = { $ref: "#/components/headers/RequestId" }
        if (status === "405") headers["Allow"] = { $ref: "#/components/headers/Allow" }
        response.headers = headers
        pruneDecodeError(response)
        if (Number(status) >= 400) response.description = describeErrors(response)
      }
    }
  }
  if (doc.components?.schemas) {
    delete doc.components.schemas["HttpApiDecodeError"]
    delete doc.components.schemas["Issue"]
    delete doc.components.schemas["PropertyKey"]
  }
  // Callers reach the API at the Installation's base URL (SVC_BASE_URL).
  doc["servers"] = [
    {
      url: "{baseUrl}",
      description: "The Installation's base URL",
      variables: { baseUrl: { default: "http://127.0.0.1:8080" } }
    }
  ]
  return doc
}

const isDecodeErrorRef = (node: unknown): boolean =>
  typeof node === "object" && node !== null && (node as { $ref?: unknown }).$ref === "#/components/schemas/HttpApiDecodeError"

const pruneDecodeError = (response: Record<string, unknown>): void => {
  const content = response.content as Record<string, { schema?: { anyOf?: Array<unknown> } & Record<string, unknown> }> | undefined
  for (const media of Object.values(content ?? {})) {
    const schema = media.schema
    if (!schema) continue
    if (Array.isArray(schema.anyOf)) {
      const kept = schema.anyOf.filter((member) => !isDecodeErrorRef(member))
      if (kept.length === 1) media.schema = kept[0] as typeof schema
      else schema.anyOf = kept
    }
  }
}

const ERROR_REF = /^#\/components\/schemas\/Error_([A-Z_]+)$/

/** "NOT_FOUND" or "FORBIDDEN or NOT_FOUND": the codes a response may carry. */
const describeErrors = (response: Record<string, unknown>): string => {
  const codes = new Set<string>()
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(visit)
    if (typeof node !== "object" || node === null) return
    const ref = (node as { $ref?: unknown }).$ref
    const match = typeof ref === "string" ? ERROR_REF.exec(ref) : null
    if (match) codes.add(match[1]!)
    Object.values(node).forEach(visit)
  }
  visit(response.content)
  return codes.size > 0 ? [...codes].sort().join(" or ") : String(response.description ?? "Error")
}

/** The OpenAPI 3.1.0 document of an API, as served and exported. */
export const openApiDocument = (api: HttpApi.HttpApi.Any): Record<string, unknown> =>
  OpenApi.fromApi(api as HttpApi.HttpApi.AnyWithProps) as unknown as Record<string, unknown>
