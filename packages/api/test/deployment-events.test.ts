/**
 * A deployment's status as Server-Sent Events (DESIGN §18 "Watch", an extension), read with a raw
 * fetch stream reader. No worker runs here: the work item is moved in SQL as the engine moves it,
 * and migration 0014's trigger announces each change as the engine's own writes are announced.
 * A change written with the trigger silenced is seen only after a later notification or a
 * reconnect of the API's LISTEN connection: the streams do not poll. The real worker and gateway
 * drive a stream in agents-rollback-e2e.test.ts.
 */
import { describe, expect, layer } from "@effect/vitest"
import { FetchHttpClient } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { MAX_DEPLOYMENT_STREAMS_PER_CALLER } from "@svc/core/api"
import { Credentials, watchDeploymentEvents } from "@svc/core/client"
import { RevisionId } from "@svc/core/schema"
import { Duration, Effect, Either, Layer, Scope, Stream } from "effect"
import { bindInstallationAdmin } from "../../../testing/identity.js"
import { REQUEST_ID, TestServer } from "../../../testing/server.js"
import { DeploymentEventsHeartbeat } from "../src/agents/index.js"
import { setUpDeployableAgent } from "./support/deployableAgent.js"
import { apiTestLayer, expectData, type Headers, seedAdmin, seedNamespace, seedServiceKey, send, until } from "./support/iamServer.js"

const HEARTBEAT = Duration.millis(150)

/** A raw reader of an event stream: each block between blank lines, as sent; null once closed. */
const openEvents = (url: string, headers: Headers) =>
  Effect.acquireRelease(Effect.promise(async () => {
    const abort = new AbortController()
    const response = await fetch(url, { headers, signal: abort.signal })
    let reader: ReadableStreamDefaultReader<Uint8Array> | undefined
    const decoder = new TextDecoder()
    let buffer = ""
    const next = async (): Promise<string | null> => {
      for (;;) {
        const end = buffer.indexOf("\n\n")
        if (end !== -1) {
          const block = buffer.slice(0, end)
          buffer = buffer.slice(end + 2)
          return block
        }
        reader ??= response.body!.getReader()
        const { done, value } = await reader.read()
        if (done) return null
        buffer += decoder.decode(value, { stream: true })
      }
    }
    return { response, next: Effect.promise(next), close: Effect.sync(() => abort.abort()) }
  }), (events) => events.close)

type Events = Effect.Effect.Success<ReturnType<typeof openEvents>>

/** The next status event's data, skipping heartbeats; null when the stream closed. */
const nextStatus = (events: Events) =>
  Effect.gen(function* () {
    for (;;) {
      const block = yield* events.next
      if (block === null) return null
      if (block === ": heartbeat") continue
      const [event, data, ...rest] = block.split("\n")
      expect(event).toBe("event: status")
      expect(rest).toEqual([])
      return JSON.parse(data!.replace(/^data: /, "")) as { status: string; deploymentId: string; progress: unknown; error: unknown }
    }
  })

const testLayer = apiTestLayer().pipe(Layer.provide(Layer.succeed(DeploymentEventsHeartbeat, HEARTBEAT)))

describe("deployment events", () => {
  layer(testLayer, { timeout: 120_000, excludeTestServices: true })((it) => {
    const setup = (label: string) =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const sql = yield* SqlClient.SqlClient
        const admin = yield* seedAdmin(`events-${label}@example.com`)
        const ns = yield* seedNamespace(`events-${label}`)
        const call = (method: string, path: string, body?: unknown) => send(baseUrl, method, `/namespaces/${ns}/${path}`, admin.headers, body)
        const { agent } = yield* setUpDeployableAgent(ns, call)
        const deploy = Effect.map(call("POST", `agents/${agent.id}/deploy`), (r) => expectData(r, 202).id as string)
        const eventsPath = (revisionId: string) => `/namespaces/${ns}/agents/${agent.id}/deployments/${revisionId}/events`
        const open = (revisionId: string, headers: Headers = admin.headers) => openEvents(`${baseUrl}${eventsPath(revisionId)}`, headers)
        const status = (revisionId: string) => Effect.map(call("GET", `agents/${agent.id}/deployments/${revisionId}`), (r) => expectData(r, 200))
        // The engine's writes (claim, success), announced by the trigger like the engine's own.
        const claim = (revisionId: string) => sql`
          UPDATE work_items SET state = 'running', lease_owner = 'worker-a', lease_expires_at = now() + interval '30 seconds',
            attempt_count = attempt_count + 1, updated_at = now()
          WHERE kind = 'agent.deploy' AND key = ${revisionId}
        `
        const succeed = (revisionId: string) => sql`
          UPDATE work_items SET state = 'succeeded', finished_at = now(), lease_owner = NULL, lease_expires_at = NULL,
            last_attempt_at = now(), last_attempt_code = 'SUCCEEDED', last_attempt_message = 'The work succeeded.', updated_at = now()
          WHERE kind = 'agent.deploy' AND key = ${revisionId}
        `
        /** A write with the trigger silenced: nothing is notified. */
        const silently = <A, E, R>(write: Effect.Effect<A, E, R>) =>
          sql.withTransaction(Effect.zipRight(sql`SET LOCAL session_replication_role = replica`, write))
        return { baseUrl, sql, admin, ns, agent, deploy, open, status, claim, succeed, silently, eventsPath }
      })

    it.scoped("the current status at once, each change, the terminal status, then the stream closes", () =>
      Effect.gen(function* () {
        const { deploy, open, status, claim, succeed } = yield* setup("sequence")
        const revision = yield* deploy
        const events = yield* open(revision)
        expect(events.response.status).toBe(200)
        expect(events.response.headers.get("content-type")).toBe("text/event-stream")
        expect(events.response.headers.get("x-request-id")).toMatch(REQUEST_ID)
        const first = yield* nextStatus(events)
        expect(first).toEqual(yield* status(revision))
        expect(first!.status).toBe("queued")

        yield* claim(revision)
        const running = yield* nextStatus(events)
        expect(running).toEqual(yield* status(revision))
        expect(running!.status).toBe("running")

        yield* succeed(revision)
        const done = yield* nextStatus(events)
        expect(done).toEqual(yield* status(revision))
        expect(done).toMatchObject({ status: "succeeded", error: null, progress: null })
        expect(yield* events.next).toBeNull()
      }))

    it.scoped("a terminal deployment: one event, then the stream closes", () =>
      Effect.gen(function* () {
        const { deploy, open, status, claim, succeed } = yield* setup("terminal")
        const revision = yield* deploy
        yield* claim(revision)
        yield* succeed(revision)
        const events = yield* open(revision)
        expect(yield* nextStatus(events)).toEqual(yield* status(revision))
        expect(yield* events.next).toBeNull()
      }))

    it.scoped("401, 403 and 404 are JSON envelopes, answered before any stream", () =>
      Effect.gen(function* () {
        const { ns, deploy, open } = yield* setup("errors")
        const revision = yield* deploy
        const expectEnvelope = (events: Events, status: number, code: string) =>
          Effect.gen(function* () {
            expect(events.response.status).toBe(status)
            expect(events.response.headers.get("content-type")).toContain("application/json")
            const body = yield* Effect.promise(() => events.response.json())
            expect(body).toEqual({ error: { code, message: expect.any(String) }, meta: { requestId: expect.stringMatching(REQUEST_ID) } })
          })
        yield* expectEnvelope(yield* open(revision, {}), 401, "UNAUTHENTICATED")
        yield* expectEnvelope(yield* open(RevisionId.make()), 404, "NOT_FOUND")
        const other = yield* seedNamespace("events-errors-other")
        const outsider = yield* seedServiceKey("events-outsider", other)
        yield* expectEnvelope(yield* open(revision, outsider.headers), 403, "FORBIDDEN")
        expect(ns).not.toBe(other)
      }))

    it.scoped(`at most ${MAX_DEPLOYMENT_STREAMS_PER_CALLER} open streams per caller: 429; closing one frees its place`, () =>
      Effect.gen(function* () {
        const { deploy, open } = yield* setup("bound")
        const revision = yield* deploy
        const streams: Array<Events> = []
        for (let i = 0; i < MAX_DEPLOYMENT_STREAMS_PER_CALLER; i++) {
          const events = yield* open(revision)
          expect(events.response.status).toBe(200)
          expect((yield* nextStatus(events))!.status).toBe("queued")
          streams.push(events)
        }
        const refused = yield* open(revision)
        expect(refused.response.status).toBe(429)
        expect(yield* Effect.promise(() => refused.response.json())).toEqual({
          error: { code: "RESOURCE_CONFLICT", message: expect.stringContaining(`${MAX_DEPLOYMENT_STREAMS_PER_CALLER}`) },
          meta: { requestId: expect.stringMatching(REQUEST_ID) }
        })
        // Another caller is not limited by this one's streams.
        const other = yield* seedAdmin("events-bound-other@example.com")
        const theirs = yield* open(revision, other.headers)
        expect(theirs.response.status).toBe(200)
        yield* theirs.close
        // The client goes away: its place is given back once the server notices.
        yield* streams[0]!.close
        const scope = yield* Effect.scope
        const reopened = yield* until(Effect.provideService(open(revision), Scope.Scope, scope), (events) => events.response.status === 200)
        expect((yield* nextStatus(reopened))!.status).toBe("queued")
        for (const events of [...streams.slice(1), reopened]) yield* events.close
      }))

    it.scoped("no polling: a change written without a notification is sent only after the next one", () =>
      Effect.gen(function* () {
        const { sql, deploy, open, status, claim, silently } = yield* setup("silent")
        const revision = yield* deploy
        const events = yield* open(revision)
        expect((yield* nextStatus(events))!.status).toBe("queued")
        // The first event is sent before the stream subscribes and re-reads; a change written
        // before that re-read would be sent by it. A notified change first: once its event is here,
        // the subscription is live, and one heartbeat later no earlier notification is in flight.
        yield* claim(revision)
        expect((yield* nextStatus(events))!.status).toBe("running")
        expect(yield* events.next).toBe(": heartbeat")
        // The attempt failed and the item waits for its retry, written without a notification.
        yield* silently(sql`
          UPDATE work_items SET state = 'queued', lease_owner = NULL, lease_expires_at = NULL,
            next_attempt_at = now() + interval '1 hour', last_attempt_at = now(),
            last_attempt_code = 'INTERNAL_ERROR', last_attempt_message = 'The work failed.', updated_at = now()
          WHERE kind = 'agent.deploy' AND key = ${revision}
        `)
        expect((yield* status(revision)).status).toBe("queued")
        // Heartbeats go on; no status event comes between them.
        for (let i = 0; i < 4; i++) expect(yield* events.next).toBe(": heartbeat")
        yield* sql`SELECT pg_notify('svc_deployment', ${revision})`
        expect(yield* nextStatus(events)).toEqual(yield* status(revision))
        yield* events.close
      }))

    it.scoped("a lost LISTEN connection: on reconnect every stream re-reads, so no terminal event is lost", () =>
      Effect.gen(function* () {
        const { sql, deploy, open, status, claim, succeed, silently } = yield* setup("reconnect")
        const revision = yield* deploy
        const events = yield* open(revision)
        expect((yield* nextStatus(events))!.status).toBe("queued")
        // Finished while nobody could have heard it. Other test files share the cluster (each its own database),
        // so only this server's listener is cut.
        yield* silently(Effect.zipRight(claim(revision), succeed(revision)))
        const killed = yield* sql<{ killed: boolean }>`
          SELECT pg_terminate_backend(pid) AS killed FROM pg_stat_activity WHERE application_name = 'svc-api-deployment-events'
            AND datname = current_database()
        `
        expect(killed).toEqual([{ killed: true }])
        const done = yield* nextStatus(events)
        expect(done).toEqual(yield* status(revision))
        expect(done!.status).toBe("succeeded")
        expect(yield* events.next).toBeNull()
      }))

    it.scoped("the client helper: statuses until the terminal one; error responses as tagged errors", () =>
      Effect.gen(function* () {
        const { baseUrl, ns, agent, deploy, claim, succeed } = yield* setup("client")
        const key = yield* seedServiceKey("events-client")
        yield* bindInstallationAdmin(key.principalId)
        const revision = yield* deploy
        const options = { baseUrl, credentials: Credentials.serviceKey(key.key) }
        const watched = yield* watchDeploymentEvents(options, { namespaceId: ns, agentId: agent.id, deploymentId: revision }).pipe(
          Stream.tap((s) => (s.status === "queued" ? claim(revision) : s.status === "running" ? succeed(revision) : Effect.void)),
          Stream.runCollect,
          Effect.provide(FetchHttpClient.layer)
        )
        expect([...watched].map((s) => s.status)).toEqual(["queued", "running", "succeeded"])
        const missing = yield* watchDeploymentEvents(options, { namespaceId: ns, agentId: agent.id, deploymentId: RevisionId.make() }).pipe(
          Stream.runCollect,
          Effect.either,
          Effect.provide(FetchHttpClient.layer)
        )
        expect(Either.isLeft(missing) && (missing.left as { _tag: string })._tag).toBe("NotFound")
      }))
  })
})
