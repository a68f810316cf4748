/**
 * Secrets scan of repository credentials: a session's bearer, the installation tokens the
 * credential service minted (for sessions and for descriptions) and the App's private key appear
 * in no API response, no API log line, no audit row and no line the credential service logged,
 * after a run through every repository path: options with descriptions, Agent create, PATCH,
 * deploy and reads, a session opened through the Repo Driver, used through the listener, closed.
 */
import { describe, expect, layer } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { newAdmissionId, RepoDriver } from "@svc/core/drivers/repo"
import { RoleId } from "@svc/core/schema"
import { Effect, Layer, Redacted } from "effect"
import { afterAll, beforeAll } from "vitest"
import { bindRole } from "../../../testing/identity.js"
import { until } from "../../../testing/poll.js"
import { call, LogCapture } from "../../../testing/server.js"
import { apiTestLayer, expectData, type Result } from "./support/iamServer.js"
import { NS_A, optionsDriver, optionsFixture, type OptionsUpstream, startOptionsUpstream } from "./support/repositoryOptions.js"

let upstream: OptionsUpstream

beforeAll(async () => {
  upstream = await startOptionsUpstream()
}, 120_000)

afterAll(async () => {
  await upstream?.stop()
})

describe("repository credentials secrets scan", () => {
  layer(apiTestLayer().pipe(Layer.provide(Layer.succeed(RepoDriver, optionsDriver)), Layer.provideMerge(LogCapture.layer)), {
    timeout: 180_000,
    excludeTestServices: true
  })((it) => {
    it.effect("no bearer, installation token or App key in responses, logs or audit rows", () =>
      Effect.gen(function* () {
        const f = yield* optionsFixture(NS_A, "scan")
        const sql = yield* SqlClient.SqlClient
        const responses: Array<Result> = []
        const keep = (result: Result) => {
          responses.push(result)
          return result
        }
        const call_ = (method: string, path: string, body?: unknown) =>
          Effect.map(
            Effect.promise(() =>
              call(`${f.baseUrl}/namespaces/${NS_A}/${path}`, {
                method,
                headers: body === undefined ? f.admin.headers : { ...f.admin.headers, "content-type": "application/json" },
                ...(body === undefined ? {} : { body: JSON.stringify(body) })
              })
            ),
            keep
          )

        yield* until(call_("GET", "agents/repository-options?descriptionRefs=widgets,gadgets"), (r) => r.body?.meta?.descriptionsPending === false, 120)
        const configuration = expectData(yield* call_("POST", "configurations", { kind: "agent", values: {} }), 201)
        const secret = expectData(yield* call_("POST", "secrets", { name: "scan-model-key", value: "sk-scan" }), 201)
        const agent = expectData(yield* call_("POST", "agents", {
          name: "scanned",
          configurationId: configuration.id,
          harnessAuth: { method: "api_key", source: { kind: "secret", namespaceId: NS_A, id: secret.id } },
          repositoryBindings: [{ repositoryRef: "widgets", profile: "git-read" }]
        }), 201)
        expectData(yield* call_("PATCH", `agents/${agent.id}`, {
          configurationId: configuration.id,
          repositoryAccess: { defaultProfile: "git-read", repositories: [{ repositoryRef: "widgets", profile: "git-write" }] }
        }), 200)
        const role = RoleId.make()
        yield* sql`INSERT INTO roles (id, namespace_id, name, permissions) VALUES (${role}, ${NS_A}, ${`operate-${role}`}, ARRAY['secret:operate'])`
        yield* bindRole(agent.servicePrincipalId, role, { kind: "secret", id: secret.id, namespaceId: NS_A })
        const revision = expectData(yield* call_("POST", `agents/${agent.id}/deploy`), 202)
        expect(revision.repositoryCredentials).toHaveLength(1)

        // What the worker would do: open a session for the frozen grant, use it, close it.
        const opened = yield* optionsDriver.open(revision.repositoryCredentials[0], newAdmissionId())
        if (opened.result !== "created") return yield* Effect.dieMessage(`expected a new session, got ${opened.result}`)
        const bearer = Redacted.value(opened.bearer)
        const read = yield* Effect.promise(() =>
          call(`${upstream.service.listenerUrl}/api/v3/repos/acme/widgets`, { headers: { authorization: `token ${bearer}` } })
        )
        expect(read.status).toBe(200)
        yield* optionsDriver.close(opened.session.sessionId)
        yield* call_("GET", `agents/${agent.id}`)
        yield* call_("GET", `agents/${agent.id}/revisions/${revision.id}`)
        yield* call_("GET", `agents/${agent.id}/revisions`)
        yield* Effect.promise(() => call(`${f.baseUrl}/namespaces/${NS_A}/audit`, { headers: f.admin.headers })).pipe(Effect.map(keep))

        const tokens = upstream.host.tokens.map((t) => t.token)
        expect(tokens.length).toBeGreaterThanOrEqual(2)
        yield* until(Effect.sync(() => tokens.every((t) => upstream.host.revoked.includes(t))), (all) => all, 60)
        const keyLines = upstream.host.privateKeyPem.split("\n").filter((line) => line.length > 40)
        const secrets = [bearer, bearer.slice(6), ...tokens, ...keyLines]

        const logs = (yield* LogCapture).entries.map((e) => JSON.stringify(e))
        const audit = (yield* sql<{ row: string }>`SELECT row_to_json(a)::text AS row FROM audit_events a`).map((r) => r.row)
        const places: Record<string, ReadonlyArray<string>> = {
          responses: responses.map((r) => `${JSON.stringify([...r.headers.entries()])} ${r.text}`),
          apiLogs: logs,
          auditRows: audit,
          credentialServiceOutput: [upstream.service.process.output()],
          revisionRows: (yield* sql<{ row: string }>`SELECT row_to_json(r)::text AS row FROM agent_revisions r`).map((r) => r.row)
        }
        expect(audit.length).toBeGreaterThan(0)
        expect(logs.length).toBeGreaterThan(0)
        const leaks = Object.entries(places).flatMap(([place, texts]) =>
          texts.flatMap((text) => secrets.filter((s) => text.includes(s)).map((s) => `${place}: ${s.slice(0, 12)}…`))
        )
        expect(leaks).toEqual([])
      }))
  })
})
