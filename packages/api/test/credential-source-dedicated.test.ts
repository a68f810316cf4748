/**
 * The `credential_source` harness binding where dedicated execution is offered (SPEC 2.5, 3,
 * 4.6): the caller's `credential_source:operate`, a ready same-Namespace source, the Agent
 * principal's `operate` at deployment, DELETE of a bound source refused, and the 409 for a
 * key-delivering binding while a Credential Gateway is selected.
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { RoleId } from "@svc/core/schema"
import { Effect } from "effect"
import { startCredentialGateway } from "../../../testing/credentialGateway.js"
import { bindRole } from "../../../testing/identity.js"
import { setUpDeployableAgent } from "./support/deployableAgent.js"
import { GATEWAY_TOKEN, gatewayInstallation, harnessWorld, keyWithPermissions } from "./support/credentialGatewayWorld.js"
import { apiTestLayer, expectData, expectError } from "./support/iamServer.js"

const gateway = await startCredentialGateway({ token: GATEWAY_TOKEN })
afterAll(() => gateway.stop())
const world = harnessWorld

describe("harnessAuth credential_source where dedicated execution is offered", () => {
  it.layer(apiTestLayer(gatewayInstallation(gateway, "kubernetes")), { timeout: 120_000 })((it) => {
    it.effect("binding needs the caller's credential_source:operate and a ready source of the Namespace; a bound source cannot be deleted", () =>
      Effect.gen(function* () {
        const { ns, call, source, bound } = yield* world("csh-bind")
        const basics = ["namespace:read", "agent:create", "agent:read", "configuration:read", "credential_source:read"]
        const withoutOperate = yield* keyWithPermissions(ns, "csh-no-operate", basics)
        expectError(yield* call("POST", "agents", bound(source.id), withoutOperate.headers), 403, "FORBIDDEN")
        const withOperate = yield* keyWithPermissions(ns, "csh-operate", [...basics, "credential_source:operate"])
        const agent = expectData(yield* call("POST", "agents", bound(source.id), withOperate.headers), 201)
        expect(agent.harnessAuth).toEqual({ method: "credential_source", sourceId: source.id })

        // Another Namespace's source, or none at all: 404. A source not ready: 409.
        const other = yield* world("csh-bind-other")
        expectError(yield* call("POST", "agents", bound(other.source.id)), 404, "NOT_FOUND")
        expectError(yield* call("POST", "agents", bound("cs_00000000-0000-4000-8000-000000000000")), 404, "NOT_FOUND")
        const sql = yield* SqlClient.SqlClient
        for (const state of ["registering", "deleting"]) {
          yield* sql`UPDATE credential_sources SET state = ${state} WHERE id = ${other.source.id}`
          expectError(yield* other.call("POST", "agents", other.bound(other.source.id)), 409, "RESOURCE_CONFLICT")
        }

        const refused = yield* call("DELETE", `credential-sources/${source.id}`)
        expectError(refused, 409, "RESOURCE_CONFLICT")
        expect(refused.body.error.message).toBe(`The credential source is bound by Agent ${agent.id}; rebind it first.`)
        expect(expectData(yield* call("GET", `credential-sources/${source.id}`), 200).state).toBe("ready")
        expect(gateway.providers.has(source.id)).toBe(true)
      }))

    it.effect("deploy needs the Agent principal's operate on the source; an api_key binding is refused with 409", () =>
      Effect.gen(function* () {
        const { ns, call, source, bound } = yield* world("csh-deploy")
        const agent = expectData(yield* call("POST", "agents", bound(source.id)), 201)
        const denied = yield* call("POST", `agents/${agent.id}/deploy`)
        expectError(denied, 403, "FORBIDDEN")
        expect(denied.body.error.message).toBe(
          `The Agent's service principal ${agent.servicePrincipalId} lacks credential_source:operate on ${source.id}.`
        )
        const sql = yield* SqlClient.SqlClient
        // SPEC 6: an audited denial, the caller's, naming the Agent principal that lacks the grant.
        expect(yield* sql`
          SELECT resource_kind, resource_id, details FROM audit_events WHERE kind = 'authorization.denied' AND namespace_id = ${ns}`).toEqual([{
          resource_kind: "credential_source",
          resource_id: source.id,
          details: { permission: "credential_source:operate", reason: "no-grant", principalId: agent.servicePrincipalId }
        }])
        const role = RoleId.make()
        yield* sql`INSERT INTO roles (id, namespace_id, name, permissions) VALUES (${role}, ${ns}, 'source-operator', ARRAY['credential_source:operate'])`
        yield* bindRole(agent.servicePrincipalId, role, { kind: "credential_source", id: source.id, namespaceId: ns })
        const deployed = expectData(yield* call("POST", `agents/${agent.id}/deploy`), 202)
        const revision = yield* sql<{ method: string; source_id: string }>`
          SELECT snapshot -> 'harness' -> 'auth' ->> 'method' AS method, snapshot -> 'harness' -> 'auth' ->> 'sourceId' AS source_id
          FROM agent_revisions WHERE id = ${deployed.id}`
        expect(revision).toEqual([{ method: "credential_source", source_id: source.id }])

        const { agent: keyed } = yield* setUpDeployableAgent(ns, (method, path, body) => call(method, path, body))
        expectError(yield* call("POST", `agents/${keyed.id}/deploy`), 409, "RESOURCE_CONFLICT")
        // direct_token too (SPEC 4.6): admitted as a draft, refused at deployment.
        const other = yield* world("csh-deploy-direct")
        const direct = expectData(yield* other.call("POST", "agents", {
          name: "direct",
          configurationId: other.configuration.id,
          executionMode: "dedicated",
          harnessAuth: { method: "direct_token", source: { kind: "secret", namespaceId: other.ns, id: other.secret.id } }
        }), 201)
        const refused = yield* other.call("POST", `agents/${direct.id}/deploy`)
        expectError(refused, 409, "RESOURCE_CONFLICT")
        expect(refused.body.error.message).toBe(
          "While a Credential Gateway is selected, deployment refuses harness authentication direct_token; bind a credential source."
        )
        expect(yield* Effect.flatMap(SqlClient.SqlClient, (sql) => sql`SELECT id FROM agent_revisions WHERE agent_id = ${direct.id}`)).toEqual([])
      }))

    // docs/decisions/configurations.md "Model-credential endpoints": the egress sends the source's key where the values point.
    it.effect("a Configuration PATCH that adds a model endpoint under a bound source needs credential_source:operate; refused, nothing changes", () =>
      Effect.gen(function* () {
        const { ns, call, source, configuration, bound } = yield* world("csh-redirect")
        expectData(yield* call("POST", "agents", bound(source.id)), 201)
        const editor = ["namespace:read", "configuration:read", "configuration:update", "credential_source:read"]
        const withoutOperate = yield* keyWithPermissions(ns, "csh-redirect-editor", editor)
        const withOperate = yield* keyWithPermissions(ns, "csh-redirect-binder", [...editor, "credential_source:operate"])
        const redirect = { values: { models: { providers: { vendor: { baseUrl: "https://collector.example/v1", models: [] } } } } }
        const path = `configurations/${configuration.id}`
        expectError(yield* call("PATCH", path, redirect, withoutOperate.headers), 403, "FORBIDDEN")
        expect(expectData(yield* call("GET", path), 200)).toMatchObject({ generation: 1, values: { agents: {} } })
        // The harness holds no key the gateway could reach: a change that keeps the endpoints is free.
        expect(expectData(yield* call("PATCH", path, { values: { agents: {}, ui: {} } }, withoutOperate.headers), 200).generation).toBe(2)
        expect(expectData(yield* call("PATCH", path, redirect, withOperate.headers), 200).values).toEqual(redirect.values)
      }))

    // SPEC 4.6: "register a new source, rebind and redeploy Agents, then delete the old one".
    it.effect("after rebind and redeploy the old source can be deleted; a queued deployment or the active revision still blocks it", () =>
      Effect.gen(function* () {
        const { ns, call, secret, source: old, configuration, bound } = yield* world("csh-replace")
        const sql = yield* SqlClient.SqlClient
        const agent = expectData(yield* call("POST", "agents", bound(old.id)), 201)
        const replacement = expectData(yield* call("POST", "credential-sources", {
          name: "vendor-next",
          type: "modelvendor",
          secrets: { api_key: { kind: "secret", namespaceId: ns, id: secret.id } }
        }), 201)
        const role = RoleId.make()
        yield* sql`INSERT INTO roles (id, namespace_id, name, permissions) VALUES (${role}, ${ns}, 'source-operator', ARRAY['credential_source:operate'])`
        for (const id of [old.id, replacement.id]) {
          yield* bindRole(agent.servicePrincipalId, role, { kind: "credential_source", id, namespaceId: ns })
        }
        const activate = (revisionId: string) =>
          Effect.zipRight(
            sql`UPDATE work_items SET state = 'succeeded', finished_at = now() WHERE key = ${revisionId}`,
            sql`UPDATE agents SET active_revision_id = ${revisionId} WHERE id = ${agent.id}`
          )
        const first = expectData(yield* call("POST", `agents/${agent.id}/deploy`), 202)
        expectData(yield* call("PATCH", `agents/${agent.id}`, {
          configurationId: configuration.id,
          harnessAuth: { method: "credential_source", sourceId: replacement.id }
        }), 200)
        const deleteOld = () => call("DELETE", `credential-sources/${old.id}`)
        // The draft no longer binds it; the queued deployment, then the active revision, do.
        expect((yield* deleteOld()).body.error.message).toBe(`The credential source is bound by deployment ${first.id}; rebind it first.`)
        yield* activate(first.id)
        expectError(yield* deleteOld(), 409, "RESOURCE_CONFLICT")
        const second = expectData(yield* call("POST", `agents/${agent.id}/deploy`), 202)
        yield* activate(second.id)
        // Only a superseded revision names it now: history does not keep a source alive.
        const deleted = yield* deleteOld()
        expect(deleted.status).toBe(204)
        expect(gateway.providers.has(old.id)).toBe(false)
        expectError(yield* call("GET", `credential-sources/${old.id}`), 404, "NOT_FOUND")
        expectError(yield* call("DELETE", `credential-sources/${replacement.id}`), 409, "RESOURCE_CONFLICT")
        expect(gateway.providers.has(replacement.id)).toBe(true)
      }))
  })
})
