/**
 * A loopback implementation of the sandbox gateway's provider service (`openshell.v1.OpenShell`,
 * UPSTREAMS.md) over real gRPC, for the Credential Gateway Driver's tests (DESIGN §11). It keeps
 * providers in memory, checks the bearer token when given one, and can be told how to answer
 * each next call: a gRPC status (the 401/403/404/429/5xx equivalents), a slow answer, a call
 * held back until the test releases it (acted on only then, as a late-arriving request), or a lost
 * answer (the provider is stored, then the server goes away without answering). `restart()`
 * brings it back on the same port with its providers kept.
 */
import * as grpc from "@grpc/grpc-js"
import { openShellService, type OpenShellMethod, type ProviderMessage } from "@svc/core/drivers/credentialGateway"
import { type CredentialEgress, startCredentialEgress } from "./credentialEgress.js"

export type Behaviour =
  | { readonly kind: "status"; readonly code: grpc.status }
  | { readonly kind: "slow"; readonly ms: number }
  | { readonly kind: "held"; readonly until: Promise<void> }
  | { readonly kind: "lost" }

export interface StoredProvider {
  readonly name: string
  readonly type: string
  readonly labels: Record<string, string>
  readonly config: Record<string, string>
  readonly credentials: Record<string, string>
}

export interface LoopbackCredentialGateway {
  /** `http://127.0.0.1:<port>`, for a Backend `endpoint`. */
  readonly endpoint: string
  readonly port: number
  readonly providers: Map<string, StoredProvider>
  /** Every call received, in order: method and provider name. */
  readonly calls: Array<{ readonly method: OpenShellMethod; readonly name: string }>
  /** Answer the next calls of `method` this way, one entry per call. */
  readonly next: (method: OpenShellMethod, ...behaviours: ReadonlyArray<Behaviour>) => void
  readonly reset: () => void
  readonly stop: () => Promise<void>
  readonly restart: () => Promise<void>
  /** Starts this gateway's HTTP egress (`credentialEgress.ts`): it injects its providers' `api_key`. */
  readonly startEgress: () => Promise<CredentialEgress>
}

/** A request as proto-loader decodes it: the fields the loopback reads. */
interface GatewayRequest {
  readonly name?: string
  readonly provider?: {
    readonly type?: string
    readonly metadata?: { readonly name?: string; readonly labels?: Record<string, string> }
    readonly config?: Record<string, string>
    readonly credentials?: Record<string, string>
  }
}

type Unary = (call: grpc.ServerUnaryCall<GatewayRequest, unknown>, callback: grpc.sendUnaryData<unknown>) => void

export interface GatewayOptions {
  /** The bearer token every call must carry; absent: calls are unauthenticated. */
  readonly token?: string
  /** Serve TLS with this key and certificate (PEM); absent: plaintext. */
  readonly tls?: { readonly key: Buffer; readonly cert: Buffer }
}

export const startCredentialGateway = async (options: GatewayOptions = {}): Promise<LoopbackCredentialGateway> => {
  const providers = new Map<string, StoredProvider>()
  const calls: Array<{ method: OpenShellMethod; name: string }> = []
  const queued = new Map<OpenShellMethod, Array<Behaviour>>()
  let server: grpc.Server
  let port = 0

  const stop = () => new Promise<void>((resolve) => server.tryShutdown(() => resolve())).then(() => server.forceShutdown())
  const providerOf = (stored: StoredProvider): ProviderMessage => ({
    metadata: { id: `prov-${stored.name}`, name: stored.name, labels: stored.labels },
    type: stored.type,
    // The real gateway never returns credential values either.
    credentials: Object.fromEntries(Object.keys(stored.credentials).map((key) => [key, "[REDACTED]"])),
    config: stored.config
  })

  /** Runs `act` and answers as the next queued behaviour says. */
  const handler = (method: OpenShellMethod, act: (request: GatewayRequest) => { error: grpc.status } | { value: unknown }): Unary =>
    (call, callback) => {
      const request = call.request
      calls.push({ method, name: request.provider?.metadata?.name ?? request.name ?? "" })
      if (options.token !== undefined && call.metadata.get("authorization")[0] !== `Bearer ${options.token}`) {
        return callback({ code: grpc.status.UNAUTHENTICATED, details: "bad bearer" })
      }
      const behaviour = queued.get(method)?.shift()
      if (behaviour?.kind === "status") return callback({ code: behaviour.code, details: "told to fail" })
      const answer = (result: ReturnType<typeof act>) =>
        "error" in result ? callback({ code: result.error, details: method }) : callback(null, result.value)
      if (behaviour?.kind === "held") return void behaviour.until.then(() => answer(act(request)))
      const result = act(request)
      if (behaviour?.kind === "slow") setTimeout(() => answer(result), behaviour.ms)
      else if (behaviour?.kind === "lost") server.forceShutdown()
      else answer(result)
    }

  const implementation: grpc.UntypedServiceImplementation = {
    Health: handler("Health", () => ({ value: { status: "SERVICE_STATUS_HEALTHY", version: "loopback" } })),
    CreateProvider: handler("CreateProvider", (request) => {
      const p = request.provider
      const name = p?.metadata?.name ?? ""
      const type = p?.type ?? ""
      if (name === "" || type === "") return { error: grpc.status.INVALID_ARGUMENT }
      if (providers.has(name)) return { error: grpc.status.ALREADY_EXISTS }
      const stored = { name, type, labels: p?.metadata?.labels ?? {}, config: p?.config ?? {}, credentials: p?.credentials ?? {} }
      providers.set(name, stored)
      return { value: { provider: providerOf(stored) } }
    }),
    GetProvider: handler("GetProvider", (request) => {
      const stored = providers.get(request.name ?? "")
      return stored === undefined ? { error: grpc.status.NOT_FOUND } : { value: { provider: providerOf(stored) } }
    }),
    DeleteProvider: handler("DeleteProvider", (request) => {
      if (!providers.has(request.name ?? "")) return { error: grpc.status.NOT_FOUND }
      providers.delete(request.name ?? "")
      return { value: { deleted: true } }
    })
  }

  const start = () =>
    new Promise<void>((resolve, reject) => {
      server = new grpc.Server()
      server.addService(openShellService, implementation)
      const credentials = options.tls === undefined
        ? grpc.ServerCredentials.createInsecure()
        : grpc.ServerCredentials.createSsl(null, [{ private_key: options.tls.key, cert_chain: options.tls.cert }], false)
      server.bindAsync(`127.0.0.1:${port}`, credentials, (error, bound) => {
        if (error !== null) return reject(error)
        port = bound
        resolve()
      })
    })
  await start()

  return {
    endpoint: `http://127.0.0.1:${port}`,
    port,
    providers,
    calls,
    next: (method, ...behaviours) => queued.set(method, [...(queued.get(method) ?? []), ...behaviours]),
    reset: () => {
      providers.clear()
      calls.length = 0
      queued.clear()
    },
    stop,
    restart: async () => {
      await stop()
      await start()
    },
    startEgress: () => startCredentialEgress((name) => providers.get(name)?.credentials.api_key)
  }
}
