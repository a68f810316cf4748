/**
 * One bounded `POST /v1/chat/completions` through a gateway with its token, classified.
 *
 * How OpenClaw 2026.9 reports failures (measured): a provider's rejected credential comes back
 * with the provider's status (401, or 403) and `error.type` "authentication_error" (reason
 * `auth`) or "permission_error" (reason `auth_permanent`); a wrong *gateway* token is 401 with
 * `error.type` "unauthorized". Only the former is the Agent's credential problem.
 */
import { Duration, Effect } from "effect"
import type { PrivateEndpoint } from "../driver.js"
import { withExportedSpan } from "../../../observability/spans.js"

export type ModelProbeResult =
  | { readonly _tag: "Succeeded" }
  | { readonly _tag: "AuthenticationFailed"; readonly status: number }
  | { readonly _tag: "Failed"; readonly status: number | undefined; readonly reason: string }

const UPSTREAM_CREDENTIAL_ERRORS = new Set(["authentication_error", "permission_error"])

const errorType = (body: unknown): string | undefined => {
  if (typeof body !== "object" || body === null) return undefined
  const error = (body as { error?: unknown }).error
  if (typeof error !== "object" || error === null) return undefined
  const type = (error as { type?: unknown }).type
  return typeof type === "string" ? type : undefined
}

/** The classification of one answer (pure; the native error message is never part of it). */
export const classifyProbeAnswer = (status: number, body: unknown): ModelProbeResult => {
  if (status >= 200 && status < 300) {
    const choices = typeof body === "object" && body !== null ? (body as { choices?: unknown }).choices : undefined
    return Array.isArray(choices) && choices.length > 0
      ? { _tag: "Succeeded" }
      : { _tag: "Failed", status, reason: "answer without choices" }
  }
  const type = errorType(body)
  if ((status === 401 || status === 403) && type !== undefined && UPSTREAM_CREDENTIAL_ERRORS.has(type)) {
    return { _tag: "AuthenticationFailed", status }
  }
  if (status === 401 && type === "unauthorized") return { _tag: "Failed", status, reason: "gateway token rejected" }
  return { _tag: "Failed", status, reason: type ?? "unexpected answer" }
}

export interface ModelProbeOptions {
  /** `x-openclaw-model`: the backend model to probe; the Agent's default model when absent. */
  readonly model?: string | undefined
  readonly timeout?: Duration.DurationInput | undefined
}

/** Sends the probe; never fails: transport problems and timeouts are `Failed`. */
export const probeModel = (endpoint: PrivateEndpoint, options: ModelProbeOptions = {}): Effect.Effect<ModelProbeResult> =>
  Effect.tryPromise(async (signal) => {
    const response = await fetch(`${endpoint.url}/v1/chat/completions`, {
      method: "POST",
      signal,
      headers: {
        authorization: `Bearer ${endpoint.token}`,
        "content-type": "application/json",
        ...(options.model === undefined ? {} : { "x-openclaw-model": options.model })
      },
      body: JSON.stringify({
        model: "openclaw",
        stream: false,
        messages: [{ role: "user", content: "Connectivity check: reply with OK." }]
      })
    })
    const text = await response.text()
    let body: unknown
    try {
      body = JSON.parse(text)
    } catch {
      body = undefined
    }
    return classifyProbeAnswer(response.status, body)
  }).pipe(
    Effect.timeoutFail({
      duration: options.timeout ?? Duration.seconds(90),
      onTimeout: () => "timed out"
    }),
    Effect.catchAll((cause): Effect.Effect<ModelProbeResult> =>
      Effect.succeed({ _tag: "Failed", status: undefined, reason: typeof cause === "string" ? cause : "unreachable" })
    ),
    withExportedSpan("LocalCompute.probeModel")
  )
