/**
 * The model credential proxy of dedicated execution (`svc harness`), on real loopback HTTP: the
 * fake model server as the upstream, the loopback Credential Gateway's egress for
 * credential_source. It forwards path, query, body and streams, adds the credential, drops the
 * placeholder, refuses unknown providers, and never logs the credential.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { Server } from "node:http"
import type { AddressInfo } from "node:net"
import { credentialSourcePlaceholder, HARNESS_PLACEHOLDER, HarnessVariables, WORKSPACE_HEADER } from "@svc/core/drivers/compute"
import { type FakeModelServer, startFakeModelServer } from "../../../testing/fakeModelServer.js"
import { startCredentialGateway } from "../../../testing/credentialGateway.js"
import type { CredentialEgress } from "../../../testing/credentialEgress.js"
import { configErrorLines } from "@svc/core/config"
import { ConfigProvider, Effect, Either, Exit, Redacted, Scope } from "effect"
import { harnessConfig, type HarnessCredential, listenHarness } from "../src/harness/proxy.js"
import { freePort, svc } from "../../../testing/process.js"

const TOKEN = "direct-token-9f3e1c-secret"
const WORKSPACE = "0f8fad5b-d9cb-469f-a165-70867728950e"
let fake: FakeModelServer
const scope = Effect.runSync(Scope.make())
const logs: Array<string> = []

beforeAll(async () => {
  fake = await startFakeModelServer({ apiKey: TOKEN })
})
afterAll(async () => {
  await Effect.runPromise(Scope.close(scope, Exit.void))
  await fake.close()
})

/** A proxy on a free loopback port knowing one provider `fake`, its log lines kept in `logs`. */
const harness = async (credential: HarnessCredential, upstreams: Record<string, string> = { fake: fake.baseUrl }) => {
  const server: Server = await Effect.runPromise(
    listenHarness({ host: "127.0.0.1", port: 0, upstreams, credential, log: (line) => logs.push(JSON.stringify(line)) }).pipe(Scope.extend(scope))
  )
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

const chat = (origin: string, path: string, body: object, headers: Record<string, string> = {}) =>
  fetch(`${origin}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${HARNESS_PLACEHOLDER}`, "content-type": "application/json", "x-api-key": HARNESS_PLACEHOLDER, ...headers },
    body: JSON.stringify(body)
  })

describe("the harness proxy", () => {
  it("forwards a chat completion with the direct token instead of the placeholder, path, query and body intact", async () => {
    const origin = await harness({ kind: "bearer", token: Redacted.make(TOKEN) })
    const before = fake.requests().length
    const body = { model: fake.model, messages: [{ role: "user", content: "hello" }] }
    const response = await chat(origin, "/providers/fake/chat/completions?trace=1", body, { [WORKSPACE_HEADER]: "forged" })
    expect(response.status).toBe(200)
    expect(((await response.json()) as { choices: Array<{ message: { content: string } }> }).choices[0]!.message.content).toBe(fake.reply)
    const seen = fake.requests().slice(before)
    expect(seen).toHaveLength(1)
    expect(seen[0]).toMatchObject({ method: "POST", path: "/v1/chat/completions", search: "?trace=1", authorized: true, body })
    expect(seen[0]!.headers.authorization).toBe(`Bearer ${TOKEN}`)
    expect(seen[0]!.headers["x-api-key"]).toBeUndefined()
    // A workspace header the gateway sends is dropped: only the harness sets one.
    expect(seen[0]!.headers[WORKSPACE_HEADER]).toBeUndefined()
  })

  it("streams server-sent events through as they come", async () => {
    const origin = await harness({ kind: "bearer", token: Redacted.make(TOKEN) })
    const response = await chat(origin, "/providers/fake/chat/completions", { model: fake.model, stream: true, messages: [] })
    expect(response.status).toBe(200)
    expect(response.headers.get("content-type")).toBe("text/event-stream")
    const text = await response.text()
    const events = text.split("\n\n").filter((event) => event.startsWith("data: "))
    expect(events).toHaveLength(4)
    expect(events[1]).toContain(`"content":"${fake.reply}"`)
    expect(events[3]).toBe("data: [DONE]")
  })

  it("adds the managed access token and its workspace header (provider_service_account)", async () => {
    const origin = await harness({ kind: "bearer", token: Redacted.make(TOKEN), workspaceId: WORKSPACE })
    const before = fake.requests().length
    const response = await fetch(`${origin}/providers/fake/models`, { headers: { authorization: `Bearer ${HARNESS_PLACEHOLDER}` } })
    expect(response.status).toBe(200)
    const [seen] = fake.requests().slice(before)
    expect(seen).toMatchObject({ method: "GET", path: "/v1/models", authorized: true })
    expect(seen!.headers.authorization).toBe(`Bearer ${TOKEN}`)
    expect(seen!.headers[WORKSPACE_HEADER]).toBe(WORKSPACE)
  })

  it("passes an upstream rejection through unchanged (a wrong token is the gateway's 401)", async () => {
    const origin = await harness({ kind: "bearer", token: Redacted.make("not-the-token") })
    const response = await chat(origin, "/providers/fake/chat/completions", { model: fake.model, messages: [] })
    expect(response.status).toBe(401)
    expect(await response.json()).toEqual({
      error: { message: "Incorrect API key provided.", type: "invalid_request_error", param: null, code: "invalid_api_key" }
    })
  })

  it("answers its own health check", async () => {
    const origin = await harness({ kind: "bearer", token: Redacted.make(TOKEN) })
    const response = await fetch(`${origin}/healthz`)
    expect({ status: response.status, body: await response.json() }).toEqual({ status: 200, body: { status: "ok" } })
  })

  it("refuses a provider it does not know, and any other path, with 404 unknown_provider, forwarding nothing", async () => {
    const origin = await harness({ kind: "bearer", token: Redacted.make(TOKEN) })
    const before = fake.requests().length
    for (const path of ["/providers/other/chat/completions", "/providers/__proto__/x", "/v1/chat/completions", "/providers/"]) {
      const response = await chat(origin, path, { model: fake.model, messages: [] })
      expect(response.status, path).toBe(404)
      expect(await response.json()).toEqual({
        error: { message: "The harness forwards only to the Agent's configured model providers.", type: "invalid_request_error", code: "unknown_provider" }
      })
    }
    expect(fake.requests().length).toBe(before)
  })

  it("answers 502 upstream_unreachable when the provider cannot be reached", async () => {
    const origin = await harness({ kind: "bearer", token: Redacted.make(TOKEN) }, { gone: "http://127.0.0.1:9/v1" })
    const response = await chat(origin, "/providers/gone/chat/completions", { messages: [] })
    expect(response.status).toBe(502)
    expect(await response.json()).toEqual({
      error: { message: "The model provider could not be reached.", type: "invalid_request_error", code: "upstream_unreachable" }
    })
  })

  describe("credential_source, through the Credential Gateway's egress", () => {
    let egress: CredentialEgress
    let stop: () => Promise<void>
    beforeAll(async () => {
      const gateway = await startCredentialGateway()
      gateway.providers.set("cs_1", { name: "cs_1", type: "modelvendor", labels: {}, config: {}, credentials: { api_key: TOKEN } })
      egress = await gateway.startEgress()
      stop = async () => {
        await egress.close()
        await gateway.stop()
      }
    })
    afterAll(() => stop())

    it("sends the placeholder through the egress, which injects the key; the harness never holds it", async () => {
      const placeholder = credentialSourcePlaceholder("cs_1")
      const origin = await harness({ kind: "egress", proxy: new URL(egress.url), placeholder })
      const before = fake.requests().length
      const response = await chat(origin, "/providers/fake/chat/completions", { model: fake.model, messages: [] })
      expect(response.status).toBe(200)
      expect(egress.requests().at(-1)).toEqual({ target: `${fake.baseUrl}/chat/completions`, provider: "cs_1" })
      const [seen] = fake.requests().slice(before)
      expect(seen!.headers.authorization).toBe(`Bearer ${TOKEN}`)
    })

    it("a placeholder of a source the gateway does not have is refused by the egress (403), never forwarded", async () => {
      const origin = await harness({ kind: "egress", proxy: new URL(egress.url), placeholder: credentialSourcePlaceholder("cs_unknown") })
      const before = fake.requests().length
      const response = await chat(origin, "/providers/fake/chat/completions", { messages: [] })
      expect(response.status).toBe(403)
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe("unknown_placeholder")
      expect(fake.requests().length).toBe(before)
    })
  })

  it("never logs the credential, the workspace or the placeholder; it logs provider, method and status", () => {
    expect(logs.length).toBeGreaterThan(0)
    for (const line of logs) {
      expect(line).not.toContain(TOKEN)
      expect(line).not.toContain(WORKSPACE)
      expect(line).not.toContain(HARNESS_PLACEHOLDER)
    }
    expect(logs).toContain(JSON.stringify({ level: "info", message: "harness: forwarded", provider: "fake", method: "POST", status: 200 }))
    expect(logs).toContain(JSON.stringify({ level: "warn", message: "harness: unknown provider", provider: "other", method: "POST" }))
  })
})

describe("the harness configuration from its container's environment", () => {
  const base = { [HarnessVariables.listen]: "127.0.0.1:18790", [HarnessVariables.upstreams]: JSON.stringify({ fake: "http://up/v1" }) }
  const read = (env: Record<string, string>) =>
    Effect.runSync(Effect.either(harnessConfig.pipe(Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env)))))))
  const problems = (env: Record<string, string>) => Either.match(read(env), { onLeft: configErrorLines, onRight: () => ["accepted"] })

  it("reads direct_token, provider_service_account and credential_source", () => {
    const direct = Either.getOrThrow(read({ ...base, [HarnessVariables.method]: "direct_token", [HarnessVariables.token]: "t" }))
    expect(direct).toMatchObject({ host: "127.0.0.1", port: 18790, upstreams: { fake: "http://up/v1" }, credential: { kind: "bearer", workspaceId: undefined } })
    expect(direct.credential.kind === "bearer" && Redacted.value(direct.credential.token)).toBe("t")
    expect(Either.getOrThrow(read({
      ...base, [HarnessVariables.method]: "provider_service_account", [HarnessVariables.token]: "t", [HarnessVariables.workspaceId]: "w"
    })).credential).toMatchObject({ kind: "bearer", workspaceId: "w" })
    expect(Either.getOrThrow(read({
      ...base, [HarnessVariables.method]: "credential_source", [HarnessVariables.egress]: "http://egress:3128", [HarnessVariables.placeholder]: "p"
    })).credential).toEqual({ kind: "egress", proxy: new URL("http://egress:3128"), placeholder: "p" })
    expect(Either.getOrThrow(read({ [HarnessVariables.upstreams]: "{}", [HarnessVariables.method]: "direct_token", [HarnessVariables.token]: "t" })))
      .toMatchObject({ host: "127.0.0.1", port: 18790 })
  })

  it("refuses what it cannot run with, naming the variable and never its value", () => {
    expect(problems({ ...base, [HarnessVariables.method]: "direct_token" })).toEqual(["SVC_HARNESS_TOKEN: required but not set"])
    expect(problems({ ...base, [HarnessVariables.method]: "runtime", [HarnessVariables.token]: "secret-value" })).toEqual([
      "SVC_HARNESS_METHOD: invalid value (not shown)"
    ])
    expect(problems({ ...base, [HarnessVariables.upstreams]: "{", [HarnessVariables.method]: "direct_token" }))
      .toEqual(["SVC_HARNESS_UPSTREAMS: must be a JSON object of provider ids to base URLs"])
    expect(problems({ ...base, [HarnessVariables.upstreams]: "{\"a\":1}" })).toEqual(["SVC_HARNESS_UPSTREAMS: must be a JSON object of provider ids to base URLs"])
    expect(problems({ ...base, [HarnessVariables.listen]: "127.0.0.1:0x" })).toEqual(["SVC_HARNESS_LISTEN: must be host:port"])
    expect(problems({ ...base, [HarnessVariables.method]: "credential_source" })).toEqual(["SVC_HARNESS_EGRESS: required but not set"])
  })
})

describe("svc harness, the process", () => {
  it("exits 78 naming what is missing, without the values it was given", async () => {
    const child = svc("harness", { [HarnessVariables.method]: "direct_token", [HarnessVariables.upstreams]: JSON.stringify({ fake: fake.baseUrl }) })
    expect(await child.exited).toEqual({ code: 78, signal: null })
    expect(child.output()).toBe("SVC_HARNESS_TOKEN: required but not set\n")
  })

  it("listens where its environment says and forwards with the token only it holds", async () => {
    const port = await freePort()
    const child = svc("harness", {
      [HarnessVariables.listen]: `127.0.0.1:${port}`,
      [HarnessVariables.method]: "direct_token",
      [HarnessVariables.upstreams]: JSON.stringify({ fake: fake.baseUrl }),
      [HarnessVariables.token]: TOKEN
    })
    try {
      const listening = await child.waitFor(/message="harness: listening".*\n/)
      // Annotations in no fixed order.
      for (const annotation of ["host=127.0.0.1", `port=${port}`, "providers=fake"]) expect(listening).toContain(` ${annotation}`)
      const response = await chat(`http://127.0.0.1:${port}`, "/providers/fake/chat/completions", { model: fake.model, messages: [] })
      expect(response.status).toBe(200)
      expect(fake.requests().at(-1)!.headers.authorization).toBe(`Bearer ${TOKEN}`)
      const forwarded = await child.waitFor(/message="harness: forwarded".*\n/)
      for (const annotation of ["provider=fake", "method=POST", "status=200"]) expect(forwarded).toContain(` ${annotation}`)
      expect(child.output()).not.toContain(TOKEN)
    } finally {
      expect(await child.stop()).toEqual({ code: 0, signal: null })
    }
  })
})
