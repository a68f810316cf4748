/**
 * The Credential Gateway Driver of the `sandbox_gateway` Backend (SPEC 2.10, 2.15, DESIGN §13):
 * registers, probes and removes a credential source's provider over gRPC. The bearer token is
 * read from its file at each call (a rotated file takes effect without restart); the TLS root
 * certificate when the client is made. Every call carries the Backend's `requestTimeoutMs`
 * deadline. No upstream detail (status text, metadata) leaves this module: callers see only
 * which kind of outcome a call had.
 */
import * as grpc from "@grpc/grpc-js"
import { Data, Effect } from "effect"
import * as fs from "node:fs"
import { type SandboxGatewayConfiguration, sandboxGatewayTarget } from "../../config/installation/backends.js"
import { type OpenShellMethod, openShellService, type ProviderMessage } from "./protocol.js"

/**
 * - `rejected`: the gateway answered no (it did not act).
 * - `noAnswer`: the call ended without a definite answer (deadline, lost connection, a server
 *   fault, an answer that does not match the request): the gateway may have acted.
 */
export class CredentialGatewayError extends Data.TaggedError("CredentialGatewayError")<{
  readonly outcome: "rejected" | "noAnswer"
  readonly method: OpenShellMethod
}> {
  override get message() {
    return this.outcome === "rejected"
      ? `The Credential Gateway refused ${this.method}.`
      : `The Credential Gateway gave no answer to ${this.method}.`
  }
}

/**
 * gRPC codes that are the gateway's own definite refusal: it did not act. `NOT_FOUND` is one for
 * CreateProvider (e.g. a provider type the gateway does not know); for GetProvider and
 * DeleteProvider it is handled before this, as "absent" and "already removed".
 */
const refusals = new Set<number>([
  grpc.status.INVALID_ARGUMENT,
  grpc.status.NOT_FOUND,
  grpc.status.ALREADY_EXISTS,
  grpc.status.PERMISSION_DENIED,
  grpc.status.RESOURCE_EXHAUSTED,
  grpc.status.FAILED_PRECONDITION,
  grpc.status.UNIMPLEMENTED,
  grpc.status.UNAUTHENTICATED
])

export interface ProviderRegistration {
  /** The provider's name at the gateway: the source's id. */
  readonly name: string
  readonly type: string
  readonly labels: Record<string, string>
  readonly config: Record<string, string>
  readonly credentials: Record<string, string>
}

export interface CredentialGatewayClient {
  /** CreateProvider; succeeds only on an answer naming the same provider. */
  readonly register: (provider: ProviderRegistration) => Effect.Effect<void, CredentialGatewayError>
  /** GetProvider: whether the provider exists at the gateway. */
  readonly probe: (name: string) => Effect.Effect<"present" | "absent", CredentialGatewayError>
  /** DeleteProvider; an absent provider counts as removed. */
  readonly remove: (name: string) => Effect.Effect<void, CredentialGatewayError>
  readonly close: () => void
}

export const makeCredentialGatewayClient = (configuration: SandboxGatewayConfiguration): CredentialGatewayClient => {
  const target = sandboxGatewayTarget(configuration)
  const credentials = target.tls
    ? grpc.credentials.createSsl(configuration.rootCertificatePath === undefined ? null : fs.readFileSync(configuration.rootCertificatePath))
    : grpc.credentials.createInsecure()
  // A restarted gateway is reached again within one call: calls wait for the channel up to their
  // deadline, and reconnect attempts back off to at most a second.
  const client = new grpc.Client(target.address, credentials, {
    "grpc.initial_reconnect_backoff_ms": 100,
    "grpc.max_reconnect_backoff_ms": 1000
  })

  const metadata = Effect.try({
    try: () => {
      const md = new grpc.Metadata({ waitForReady: true })
      if (configuration.auth.mode === "bearerTokenFile") {
        md.set("authorization", `Bearer ${fs.readFileSync(configuration.auth.path, "utf8").trim()}`)
      }
      return md
    },
    // An unreadable token file: nothing was sent, so the gateway did not act.
    catch: () => "unreadable" as const
  })

  const unary = <A>(method: OpenShellMethod, request: object) =>
    Effect.flatMap(
      Effect.mapError(metadata, () => new CredentialGatewayError({ outcome: "rejected", method })),
      (md) =>
        Effect.async<A, { readonly code: number }>((resume) => {
          const definition = openShellService[method]!
          const call = client.makeUnaryRequest(
            definition.path,
            definition.requestSerialize,
            definition.responseDeserialize as (bytes: Buffer) => A,
            request,
            md,
            { deadline: Date.now() + configuration.requestTimeoutMs },
            (error, value) => {
              if (error !== null) resume(Effect.fail({ code: error.code }))
              else if (value === undefined) resume(Effect.fail({ code: grpc.status.INTERNAL }))
              else resume(Effect.succeed(value))
            }
          )
          return Effect.sync(() => call.cancel())
        })
    )

  const failure = (method: OpenShellMethod) => (error: { readonly code: number } | CredentialGatewayError) =>
    error instanceof CredentialGatewayError
      ? error
      : new CredentialGatewayError({ outcome: refusals.has(error.code) ? "rejected" : "noAnswer", method })

  return {
    register: (provider) =>
      unary<{ readonly provider?: ProviderMessage | null }>("CreateProvider", {
        provider: {
          metadata: { name: provider.name, labels: provider.labels },
          type: provider.type,
          credentials: provider.credentials,
          config: provider.config
        }
      }).pipe(
        Effect.mapError(failure("CreateProvider")),
        Effect.flatMap((answer) =>
          answer.provider?.metadata?.name === provider.name
            ? Effect.void
            : Effect.fail(new CredentialGatewayError({ outcome: "noAnswer", method: "CreateProvider" }))
        )
      ),
    probe: (name) =>
      unary<{ readonly provider?: ProviderMessage | null }>("GetProvider", { name }).pipe(
        Effect.map((answer) => (answer.provider?.metadata?.name === name ? "present" as const : "absent" as const)),
        Effect.catchIf((error) => !(error instanceof CredentialGatewayError) && error.code === grpc.status.NOT_FOUND, () =>
          Effect.succeed("absent" as const)),
        Effect.mapError(failure("GetProvider"))
      ),
    remove: (name) =>
      unary<{ readonly deleted?: boolean }>("DeleteProvider", { name }).pipe(
        Effect.asVoid,
        Effect.catchIf((error) => !(error instanceof CredentialGatewayError) && error.code === grpc.status.NOT_FOUND, () => Effect.void),
        Effect.mapError(failure("DeleteProvider"))
      ),
    close: () => client.close()
  }
}
