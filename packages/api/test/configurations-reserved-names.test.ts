/**
 * Process-control destinations (SPEC 2.8: "Reserved or process-control destinations ... are
 * rejected at admission"), named one by one over the real API: the C library's, interpreters' and
 * virtual machines' start-up variables, TLS key logging, cluster clients and the browser opener
 * are refused as Secret binding destinations on create and PATCH, and as `values.env.vars`, in
 * either case, with nothing written. `configurations.test.ts` sends every entry of the lists; this
 * file pins the names a shrinking list must not lose.
 */
import { describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { TestServer } from "../../../testing/server.js"
import { setUpDeployableAgent } from "./support/deployableAgent.js"
import { apiTestLayer, expectData, expectError, seedAdmin, seedNamespace, send } from "./support/iamServer.js"

const PROCESS_CONTROL = [
  "PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "PYTHONINSPECT", "PYTHON_BASIC_REPL",
  "PERL5OPT", "PERL5LIB", "PERLLIB", "RUBYOPT", "RUBYLIB",
  "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS", "CLASSPATH",
  "GCONV_PATH", "GLIBC_TUNABLES", "MALLOC_CHECK_", "MALLOC_ARENA_MAX", "LOCPATH", "NLSPATH",
  "HOSTALIASES", "RESOLV_HOST_CONF", "LOCALDOMAIN", "RES_OPTIONS", "LC_ALL",
  "SSLKEYLOGFILE", "OPENSSL_CONF", "KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT", "KUBECONFIG",
  "DOCKER_HOST", "BROWSER", "BASH_XTRACEFD", "PIP_INDEX_URL", "GEM_HOME", "PHPRC", "LESSOPEN"
]

const counts = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const [row] = yield* sql<{ configurations: number; refs: number }>`
    SELECT (SELECT count(*)::int FROM configurations) AS configurations,
      (SELECT count(*)::int FROM configuration_secret_refs) AS refs
  `
  return row!
})

describe("process-control destinations (SPEC 2.8)", () => {
  it.layer(apiTestLayer(), { timeout: 120_000 })((it) => {
    it.effect("are refused as bindings and as env.vars, in either case, on create and PATCH; near misses are ordinary names", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdmin("cfg-process-control@example.com")
        const ns = yield* seedNamespace("cfg-process-control")
        const secret = expectData(yield* send(baseUrl, "POST", `/namespaces/${ns}/secrets`, admin.headers, { name: "k", value: "v" }), 201)
        const created = expectData(yield* send(baseUrl, "POST", `/namespaces/${ns}/configurations`, admin.headers, { kind: "agent", values: {} }), 201)
        const path = `/namespaces/${ns}/configurations/${created.id}`
        const binding = { source: { kind: "secret", namespaceId: ns, id: secret.id } }
        const before = yield* counts

        for (const name of [...PROCESS_CONTROL, ...PROCESS_CONTROL.map((n) => n.toLowerCase())]) {
          const bound = { values: {}, secretBindings: { [name]: binding } }
          const detail = [{ code: "INVALID_VALUE", path: `/secretBindings/${name}` }]
          expectError(yield* send(baseUrl, "POST", `/namespaces/${ns}/configurations`, admin.headers, { kind: "agent", ...bound }), 400, "INVALID_REQUEST", detail)
          expectError(yield* send(baseUrl, "PATCH", path, admin.headers, bound), 400, "INVALID_REQUEST", detail)
          const values = { env: { vars: { [name]: "x" } } }
          expectError(yield* send(baseUrl, "PATCH", path, admin.headers, { values }), 400, "INVALID_REQUEST", [
            { code: "INVALID_VALUE", path: `/values/env/vars/${name}` }
          ])
        }
        expect(yield* counts).toEqual(before)
        expect(expectData(yield* send(baseUrl, "GET", path, admin.headers), 200)).toMatchObject({ generation: 1, values: {}, secretBindings: {} })

        const nearMisses = ["MY_PYTHONPATH", "MALLOC", "BROWSER_TOKEN", "KUBE_TOKEN", "LOCALE_NAME", "JAVA"]
        const fine = expectData(yield* send(baseUrl, "PATCH", path, admin.headers, {
          values: {},
          secretBindings: Object.fromEntries(nearMisses.map((name) => [name, binding]))
        }), 200)
        expect(Object.keys(fine.secretBindings).sort()).toEqual([...nearMisses].sort())
      }))

    it.effect("a binding saved before its destination was reserved stops deployment with 409 until the Configuration is fixed", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const sql = yield* SqlClient.SqlClient
        const admin = yield* seedAdmin("cfg-process-control-deploy@example.com")
        const ns = yield* seedNamespace("cfg-process-control-deploy")
        const call = (method: string, path: string, body?: unknown) => send(baseUrl, method, `/namespaces/${ns}/${path}`, admin.headers, body)
        const { secret, configuration, agent } = yield* setUpDeployableAgent(ns, call)
        // As a row written before the rule holds it.
        const bindings = { PYTHONPATH: { source: { kind: "secret", namespaceId: ns, id: secret.id } } }
        yield* sql`UPDATE configurations SET secret_bindings = ${JSON.stringify(bindings)}::jsonb WHERE id = ${configuration.id}`
        yield* sql`INSERT INTO configuration_secret_refs (configuration_id, secret_id) VALUES (${configuration.id}, ${secret.id})`

        const refused = yield* call("POST", `agents/${agent.id}/deploy`)
        expectError(refused, 409, "RESOURCE_CONFLICT")
        expect(refused.body.error.message).toBe("The Configuration binds a Secret to the reserved variable PYTHONPATH; update the Configuration before deploying.")
        expect(yield* sql`SELECT id FROM agent_revisions WHERE agent_id = ${agent.id}`).toEqual([])
        expect(yield* sql`SELECT id FROM work_items WHERE kind = 'agent.deploy' AND payload ->> 'agentId' = ${agent.id}`).toEqual([])

        expectData(yield* call("PATCH", `configurations/${configuration.id}`, { values: { agents: {} }, secretBindings: {} }), 200)
        expect(expectData(yield* call("POST", `agents/${agent.id}/deploy`), 202).agentId).toBe(agent.id)
      }))
  })
})
