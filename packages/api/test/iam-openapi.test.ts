/**
 * What the IAM, Installation and Backends endpoints send matches what the OpenAPI document says,
 * for successes and every error status they declare.
 */
import { describe, expect, it } from "@effect/vitest"
import { SvcApi } from "@svc/api"
import { documentOf } from "../../../testing/openapiDoc.js"
import { BuiltinRoles } from "@svc/core/iam"
import { Ajv2020 } from "ajv/dist/2020.js"
import { Effect } from "effect"
import { createRequire } from "node:module"
import { createServicePrincipal } from "../../../testing/identity.js"
import { TestServer } from "../../../testing/server.js"
import {
  anonymous,
  apiTestLayer,
  type Headers,
  type Result,
  seedAdmin,
  seedHuman,
  seedNamespace,
  seedServiceKey,
  send
} from "./support/iamServer.js"

const doc = documentOf(SvcApi)
const ajv = new Ajv2020({ strict: false, allErrors: true })
const addFormats = createRequire(import.meta.url)("ajv-formats") as (ajv: Ajv2020) => void
addFormats(ajv)
ajv.addSchema({ ...doc, $id: "openapi" })

const escape = (segment: string) => segment.replace(/~/g, "~0").replace(/\//g, "~1")

/** Checks a response against the document's schema for that operation and status. */
const conforms = (documented: string, method: string, result: Result) => {
  const response = doc.paths[documented]?.[method]?.responses?.[String(result.status)]
  expect(response, `${method} ${documented} documents ${result.status}`).toBeDefined()
  if (result.status === 204) {
    expect(result.text).toBe("")
    return
  }
  const pointer = ["paths", documented, method, "responses", String(result.status), "content", "application/json", "schema"]
    .map(escape)
    .join("/")
  const validate = ajv.compile({ $ref: `openapi#/${pointer}` })
  const valid = validate(result.body)
  expect(validate.errors ?? [], `${method} ${documented} ${result.status}: ${result.text}`).toEqual([])
  expect(valid).toBe(true)
}

const ROLES = "/namespaces/{namespaceId}/iam/roles"
const ROLE = "/namespaces/{namespaceId}/iam/roles/{roleId}"
const BINDINGS = "/namespaces/{namespaceId}/iam/access-bindings"
const BINDING = "/namespaces/{namespaceId}/iam/access-bindings/{bindingId}"
const SPS = "/iam/service-principals"
const SP = "/iam/service-principals/{servicePrincipalId}"
const NS_SPS = "/namespaces/{namespaceId}/iam/service-principals"
const NS_SP = "/namespaces/{namespaceId}/iam/service-principals/{servicePrincipalId}"

describe("IAM, Installation and Backends responses against the OpenAPI document", () => {
  it("documents every operation with its success and error statuses", () => {
    for (const [path, method, statuses] of [
      [ROLES, "post", ["201", "400", "401", "403", "404", "409", "415", "503"]],
      [ROLES, "get", ["200", "400", "401", "403", "404"]],
      [BINDINGS, "get", ["200", "400", "401", "403", "404"]],
      [ROLE, "delete", ["204", "401", "403", "404", "409"]],
      [BINDINGS, "post", ["201", "400", "401", "403", "404", "409"]],
      [BINDING, "get", ["200", "401", "403", "404"]],
      // 409: a reused Idempotency-Key (DESIGN §18), on every create.
      [SPS, "post", ["201", "400", "401", "403", "409"]],
      [NS_SP, "delete", ["204", "401", "403", "404"]],
      ["/installation", "get", ["200", "401", "403"]],
      ["/backends", "get", ["200", "401", "403"]]
    ] as const) {
      const responses = doc.paths[path]?.[method]?.responses ?? {}
      for (const status of statuses) expect(responses, `${method} ${path}`).toHaveProperty(status)
      // 409 is documented only where it can happen.
      if (!(statuses as ReadonlyArray<string>).includes("409")) expect(responses, `${method} ${path}`).not.toHaveProperty("409")
      expect(doc.paths[path][method].summary).toEqual(expect.any(String))
    }
  })

  it.layer(apiTestLayer(), { timeout: 120_000 })((it) => {
    it.effect("successes and errors match their documented schemas", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdmin("openapi-admin@example.com")
        const nobody = yield* seedHuman("openapi-nobody@example.com")
        const ns = yield* seedNamespace("openapi")
        const other = yield* seedNamespace("openapi-other")
        const foreign = yield* seedServiceKey("openapi-foreign", other)
        const check = (documented: string, method: string, path: string, headers: Headers, body?: unknown) =>
          Effect.tap(send(baseUrl, method.toUpperCase(), path, headers, body), (result) => Effect.sync(() => conforms(documented, method, result)))

        const role = (yield* check(ROLES, "post", `/namespaces/${ns}/iam/roles`, admin.headers, { name: "doc", permissions: ["agent:read"] })).body.data
        yield* check(ROLES, "post", `/namespaces/${ns}/iam/roles`, admin.headers, { name: "doc", permissions: ["agent:read"] })
        yield* check(ROLES, "post", `/namespaces/${ns}/iam/roles`, admin.headers, { name: "", permissions: ["x"] })
        yield* check(ROLES, "post", `/namespaces/${ns}/iam/roles`, anonymous, { name: "a", permissions: ["agent:read"] })
        yield* check(ROLES, "post", `/namespaces/${ns}/iam/roles`, foreign.headers, { name: "a", permissions: ["agent:read"] })
        yield* check(ROLES, "get", `/namespaces/${ns}/iam/roles`, admin.headers)
        yield* check(ROLES, "get", `/namespaces/${ns}/iam/roles`, nobody.headers)
        yield* check(ROLE, "get", `/namespaces/${ns}/iam/roles/${role.id}`, admin.headers)
        yield* check(ROLE, "get", `/namespaces/${ns}/iam/roles/${BuiltinRoles.namespaceAdmin.id}`, admin.headers)

        const principal = yield* createServicePrincipal("doc", ns)
        const bindingBody = { principalId: principal, roleId: role.id, resource: { kind: "namespace", id: ns } }
        const binding = (yield* check(BINDINGS, "post", `/namespaces/${ns}/iam/access-bindings`, admin.headers, bindingBody)).body.data
        yield* check(BINDINGS, "post", `/namespaces/${ns}/iam/access-bindings`, admin.headers, bindingBody)
        yield* check(BINDINGS, "get", `/namespaces/${ns}/iam/access-bindings`, admin.headers)
        yield* check(BINDING, "get", `/namespaces/${ns}/iam/access-bindings/${binding.id}`, admin.headers)
        yield* check(ROLE, "delete", `/namespaces/${ns}/iam/roles/${role.id}`, admin.headers)
        yield* check(BINDING, "delete", `/namespaces/${ns}/iam/access-bindings/${binding.id}`, admin.headers)
        yield* check(ROLE, "delete", `/namespaces/${ns}/iam/roles/${role.id}`, admin.headers)
        yield* check(ROLE, "get", `/namespaces/${ns}/iam/roles/${role.id}`, admin.headers)

        const sp = (yield* check(SPS, "post", "/iam/service-principals", admin.headers, { name: "doc" })).body.data
        yield* check(SPS, "get", "/iam/service-principals", admin.headers)
        yield* check(SP, "get", `/iam/service-principals/${sp.id}`, admin.headers)
        yield* check(SP, "get", `/iam/service-principals/${sp.id}`, nobody.headers)
        yield* check(SP, "delete", `/iam/service-principals/${sp.id}`, admin.headers)
        const nsSp = (yield* check(NS_SPS, "post", `/namespaces/${ns}/iam/service-principals`, admin.headers, { name: "doc" })).body.data
        yield* check(NS_SPS, "get", `/namespaces/${ns}/iam/service-principals`, admin.headers)
        yield* check(NS_SP, "get", `/namespaces/${ns}/iam/service-principals/${nsSp.id}`, admin.headers)
        yield* check(NS_SP, "delete", `/namespaces/${ns}/iam/service-principals/${nsSp.id}`, admin.headers)
        yield* check(NS_SP, "delete", `/namespaces/${ns}/iam/service-principals/${nsSp.id}`, admin.headers)

        yield* check("/installation", "get", "/installation", admin.headers)
        yield* check("/installation", "get", "/installation", nobody.headers)
        yield* check("/installation", "get", "/installation", anonymous)
        yield* check("/backends", "get", "/backends", admin.headers)
        yield* check("/backends", "get", "/backends", foreign.headers)
      }))
  })
})
