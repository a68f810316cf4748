/**
 * A small OpenAI-compatible model server on loopback, for gateways under test: it accepts exactly
 * one API key (any other gets OpenAI's 401 `invalid_api_key`), lists one model, and answers every
 * chat completion with the same text, streamed (server-sent events) when asked.
 */
import * as http from "node:http"
import type { AddressInfo } from "node:net"

export interface FakeModelRequest {
  readonly method: string
  readonly path: string
  readonly authorized: boolean
  readonly body: unknown
  /** The request's headers as received (lowercase names). */
  readonly headers: Readonly<Record<string, string | ReadonlyArray<string> | undefined>>
  /** The query string, with its `?`, or "". */
  readonly search: string
}

export interface FakeModelServer {
  /** The OpenAI-style base URL, ending in `/v1`. */
  readonly baseUrl: string
  readonly model: string
  readonly reply: string
  readonly requests: () => ReadonlyArray<FakeModelRequest>
  readonly close: () => Promise<void>
}

export interface FakeModelOptions {
  readonly apiKey: string
  readonly model?: string
  readonly reply?: string
}

const json = (res: http.ServerResponse, status: number, body: unknown) => {
  const text = JSON.stringify(body)
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) })
  res.end(text)
}

const readBody = (req: http.IncomingMessage): Promise<unknown> =>
  new Promise((resolve) => {
    let text = ""
    req.setEncoding("utf8")
    req.on("data", (chunk: string) => (text += chunk))
    req.on("end", () => {
      try {
        resolve(text === "" ? undefined : JSON.parse(text))
      } catch {
        resolve(text)
      }
    })
  })

const completion = (model: string, reply: string, created: number) => ({
  id: "chatcmpl-fake",
  object: "chat.completion",
  created,
  model,
  choices: [{ index: 0, message: { role: "assistant", content: reply }, finish_reason: "stop" }],
  usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 }
})

const stream = (res: http.ServerResponse, model: string, reply: string, created: number) => {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" })
  const chunk = (delta: object, finish: string | null, usage?: object) =>
    res.write(`data: ${
      JSON.stringify({
        id: "chatcmpl-fake",
        object: "chat.completion.chunk",
        created,
        model,
        choices: [{ index: 0, delta, finish_reason: finish }],
        ...(usage === undefined ? {} : { usage })
      })
    }\n\n`)
  chunk({ role: "assistant", content: "" }, null)
  chunk({ content: reply }, null)
  chunk({}, "stop", { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 })
  res.end("data: [DONE]\n\n")
}

export const startFakeModelServer = async (options: FakeModelOptions): Promise<FakeModelServer> => {
  const model = options.model ?? "fake-model"
  const reply = options.reply ?? "FAKE-MODEL-REPLY"
  const requests: Array<FakeModelRequest> = []
  const server = http.createServer((req, res) => {
    void readBody(req).then((body) => {
      const authorized = req.headers.authorization === `Bearer ${options.apiKey}`
      const [path, query] = (req.url ?? "/").split("?")
      requests.push({ method: req.method ?? "GET", path: path!, authorized, body, headers: { ...req.headers }, search: query === undefined ? "" : `?${query}` })
      if (!authorized) {
        return json(res, 401, {
          error: { message: "Incorrect API key provided.", type: "invalid_request_error", param: null, code: "invalid_api_key" }
        })
      }
      const created = Math.floor(Date.now() / 1000)
      if (req.method === "GET" && path === "/v1/models") {
        return json(res, 200, { object: "list", data: [{ id: model, object: "model", created, owned_by: "fake" }] })
      }
      if (req.method === "POST" && path === "/v1/chat/completions") {
        const wantsStream = typeof body === "object" && body !== null && (body as { stream?: unknown }).stream === true
        return wantsStream ? stream(res, model, reply, created) : json(res, 200, completion(model, reply, created))
      }
      return json(res, 404, { error: { message: "not found", type: "invalid_request_error", code: null } })
    })
  })
  await new Promise<void>((resolve) => server.listen({ host: "127.0.0.1", port: 0 }, resolve))
  const { port } = server.address() as AddressInfo
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    model,
    reply,
    requests: () => [...requests],
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}

/** One chat completion through a gateway's OpenAI-compatible endpoint, with its token. */
export const chatThroughGateway = async (gateway: { readonly url: string; readonly token: string }, content = "hello") => {
  const response = await fetch(`${gateway.url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${gateway.token}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "openclaw", messages: [{ role: "user", content }] })
  })
  return { status: response.status, body: (await response.json()) as { choices: Array<{ message: { content: string } }> } }
}
