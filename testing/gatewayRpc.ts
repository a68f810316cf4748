/**
 * Tests that must see what a running OpenClaw gateway itself reports (e.g. `plugins.list` with
 * each plugin's runtime state) ask it over its own WebSocket RPC, with the service's client
 * (`gatewaySession`): an operator backend client over loopback, with a fresh device key (loopback
 * devices are paired automatically), asking for `operator.read` only.
 */
import { gatewaySession, type RpcAnswer } from "@svc/core/drivers/compute"
import { Duration, Effect } from "effect"

export type { RpcAnswer }

export interface RpcRequest {
  readonly method: string
  readonly params?: Readonly<Record<string, unknown>>
}

/** Sends `requests` over one authenticated connection, in order; fails when the gateway refuses the connect. */
export const gatewayRpc = (
  endpoint: { readonly url: string; readonly token: string },
  requests: ReadonlyArray<RpcRequest>,
  timeoutMs = 60_000
): Effect.Effect<ReadonlyArray<RpcAnswer>, Error> =>
  Effect.scoped(
    gatewaySession(endpoint, { scopes: ["operator.read"], connectTimeout: Duration.millis(timeoutMs), callTimeout: Duration.millis(timeoutMs) }).pipe(
      Effect.flatMap((session) => Effect.forEach(requests, (request) => session.call(request.method, request.params)))
    )
  ).pipe(Effect.mapError((error) => new Error(`gateway RPC: ${error.reason} (${error.detail})`)))

/** A plugin as `plugins.list` reports it: configured enablement and runtime state, separately. */
export interface ListedPlugin {
  readonly id: string
  readonly origin: string
  readonly enabled: boolean
  readonly version?: string
  readonly runtime: { readonly state: string; readonly error?: string }
}

/** The gateway's `plugins.list`, only the plugins the configuration loads (`origin: "config"`). */
export const configuredPlugins = (endpoint: { readonly url: string; readonly token: string }) =>
  gatewayRpc(endpoint, [{ method: "plugins.list" }]).pipe(
    Effect.flatMap(([answer]) =>
      answer?.ok === true
        ? Effect.succeed(((answer.payload as { plugins: ReadonlyArray<ListedPlugin> }).plugins).filter((plugin) => plugin.origin === "config"))
        : Effect.fail(new Error(`plugins.list refused: ${JSON.stringify(answer?.error)}`))))
