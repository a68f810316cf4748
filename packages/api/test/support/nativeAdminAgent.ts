/**
 * The native admin tests' Agent and WebSocket client: an Installation administrator signed in
 * with the shared cookie, a Namespace and a deployed Agent whose "gateway" is the recorder.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { WebSocket } from "ws"
import { bindInstallationAdmin, createAccount, createNamespaceRow, signedInSession } from "../../../../testing/identity.js"
import { TestServer } from "../../../../testing/server.js"
import { setUpDeployableAgent } from "./deployableAgent.js"
import { expectData, send } from "./iamServer.js"
import { agentHost, CONSOLE_ORIGIN, Recorder, sharedCookie } from "./nativeAdminServer.js"

/**
 * A WebSocket through the proxy: sends `messages` in order and resolves with the gateway's echoes
 * (the recorder echoes every message) and the close code, or with the refusal.
 */
export const upgradeRequest = (baseUrl: string, host: string, headers: Record<string, string>, messages: ReadonlyArray<string>) =>
  Effect.async<{ upgraded: true; echoes: Array<string>; closeCode?: number } | { upgraded: false; status: number; body: string }>((resume) => {
    const socket = new WebSocket(`ws://127.0.0.1:${new URL(baseUrl).port}/ws?x=1`, { headers: { ...headers, host } })
    const echoes: Array<string> = []
    let done = false
    const finish = (closeCode?: number) => {
      if (done) return
      done = true
      socket.terminate()
      resume(Effect.succeed({ upgraded: true, echoes, ...(closeCode === undefined ? {} : { closeCode }) }))
    }
    socket.on("unexpected-response", (_request, response) => {
      done = true
      const chunks: Array<Buffer> = []
      response.on("data", (c: Buffer) => chunks.push(c))
      response.on("end", () => resume(Effect.succeed({ upgraded: false, status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") })))
    })
    socket.on("open", () => {
      for (const message of messages) socket.send(message)
    })
    socket.on("message", (data) => {
      echoes.push(String(data))
      if (echoes.length === messages.length) finish()
    })
    socket.on("close", (code) => finish(code))
    socket.on("error", (error) => {
      if (!done) resume(Effect.die(error))
    })
  })


/** An Installation administrator, a Namespace, and a deployed Agent with an active revision. */
export const agentFixture = (label: string) =>
  Effect.gen(function* () {
    const { baseUrl } = yield* TestServer
    const sql = yield* SqlClient.SqlClient
    const account = yield* createAccount(`admin-${label}@example.test`)
    yield* bindInstallationAdmin(account.principalId)
    const token = (yield* signedInSession(account.userId)).token
    const console = { cookie: sharedCookie(token), origin: CONSOLE_ORIGIN }
    const ns = yield* createNamespaceRow(`native-${label}`)
    const call = (method: string, path: string, body?: unknown) => send(baseUrl, method, `/namespaces/${ns}${path}`, console, body)
    const { agent } = yield* setUpDeployableAgent(ns, (method, path, body) => call(method, `/${path}`, body))
    const revision = expectData(yield* call("POST", `/agents/${agent.id}/deploy`), 202)
    yield* sql`UPDATE agents SET active_revision_id = ${revision.id}, desired_runtime_state = 'running' WHERE id = ${agent.id}`
    const recorder = yield* Recorder
    recorder.gateways.add(agent.id)
    return {
      baseUrl, token, ns, agentId: agent.id as string, revisionId: revision.id as string, host: agentHost(agent.id),
      principalId: account.principalId, userId: account.userId,
      /** A request of this administrator's console, under the Agent's Namespace. */
      call
    }
  })

