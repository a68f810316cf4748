/**
 * A deployment's statuses as they change (the `deploymentEvents` extension, DESIGN §18), for the
 * console and the CLI. Browser-safe: the request goes through `HttpClient` (fetch in a browser,
 * `FetchHttpClient`), its body is read as a stream and cut into Server-Sent Events here; no
 * `EventSource` (it cannot send `x-api-key`) and no `node:*`.
 */
import { HttpClient, HttpClientRequest } from "@effect/platform"
import { Chunk, Effect, Option, Schema, Stream } from "effect"
import { DEPLOYMENT_STATUS_EVENT } from "../api/agents/events.js"
import { DeploymentStatus } from "../api/agents/schemas.js"
import type { ClientOptions } from "./client.js"
import { transportFor } from "./credentials.js"
import { undeclaredErrorsAsTagged } from "./errors.js"

/** One parsed Server-Sent Event; comments (heartbeats) are dropped. */
export interface ServerSentEvent {
  readonly event: string
  readonly data: string
}

/** Parses one event block (the text between blank lines); undefined for a comment-only block. */
const parseBlock = (block: string): ServerSentEvent | undefined => {
  let event = "message"
  const data: Array<string> = []
  for (const line of block.split("\n")) {
    if (line === "" || line.startsWith(":")) continue
    const colon = line.indexOf(":")
    const field = colon === -1 ? line : line.slice(0, colon)
    const value = colon === -1 ? "" : line.slice(colon + 1).replace(/^ /, "")
    if (field === "event") event = value
    else if (field === "data") data.push(value)
  }
  return data.length === 0 ? undefined : { event, data: data.join("\n") }
}

/**
 * Cuts a text stream into events: blocks end at a blank line; a partial block waits for the
 * next chunk. CRLF and CR line ends count as LF (the SSE grammar allows all three).
 */
export const serverSentEvents = <E, R>(text: Stream.Stream<string, E, R>): Stream.Stream<ServerSentEvent, E, R> =>
  text.pipe(
    Stream.mapAccum("", (pending, chunk) => {
      const blocks = (pending + chunk).replace(/\r\n?/g, "\n").split("\n\n")
      const rest = blocks.pop() ?? ""
      return [rest, Chunk.fromIterable(blocks)]
    }),
    Stream.flattenChunks,
    Stream.filterMap((block) => {
      const event = parseBlock(block)
      return event === undefined ? Option.none() : Option.some(event)
    })
  )

const decodeStatus = Schema.decodeUnknown(Schema.parseJson(DeploymentStatus))

export interface DeploymentRef {
  readonly namespaceId: string
  readonly agentId: string
  readonly deploymentId: string
}

/**
 * The deployment's status now, then each change, ending after the terminal status. Error
 * responses (401, 403, 404, 429) fail the stream with their tagged error like the typed client's
 * methods; a body that is not a status fails it with a `ParseError`.
 */
export const watchDeploymentEvents = (
  options: ClientOptions,
  deployment: DeploymentRef
): Stream.Stream<DeploymentStatus, unknown, HttpClient.HttpClient> =>
  Stream.unwrapScoped(
    Effect.gen(function* () {
      const transform = yield* transportFor(options.credentials, options.baseUrl)
      const client = transform(yield* HttpClient.HttpClient).pipe(HttpClient.filterStatusOk)
      const path = `/namespaces/${encodeURIComponent(deployment.namespaceId)}/agents/${encodeURIComponent(deployment.agentId)}` +
        `/deployments/${encodeURIComponent(deployment.deploymentId)}/events`
      const request = HttpClientRequest.get(new URL(path, options.baseUrl)).pipe(HttpClientRequest.setHeader("accept", "text/event-stream"))
      const response = yield* client.execute(request).pipe(undeclaredErrorsAsTagged)
      return serverSentEvents(response.stream.pipe(Stream.decodeText())).pipe(
        Stream.filter((event) => event.event === DEPLOYMENT_STATUS_EVENT),
        Stream.mapEffect((event) => decodeStatus(event.data))
      )
    })
  )
