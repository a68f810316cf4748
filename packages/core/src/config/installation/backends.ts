/**
 * Backends (SPEC 2.15): Installation-owned configuration that gives related Drivers an
 * authenticated client. One entry per type; secrets are referenced by absolute file path,
 * never inline.
 */
import { Schema } from "effect"
import { AbsolutePath, boundedInt, DnsName, Endpoint, Identifier } from "./fields.js"

export const BackendType = Schema.Literal("model_accounts", "code_host", "sandbox_gateway")
export type BackendType = typeof BackendType.Type

export const ModelAccountsBackend = Schema.Struct({
  id: Identifier,
  type: Schema.Literal("model_accounts"),
  configuration: Schema.Struct({
    /** The upstream workspace. */
    workspaceId: Schema.UUID,
    /** A mounted file holding an admin key with service-account write authority. */
    apiKeyPath: AbsolutePath,
    credentialTtlSeconds: Schema.optionalWith(boundedInt(1, 2592000), { exact: true, default: () => 2592000 })
  }),
  drivers: Schema.Struct({ serviceAccount: Identifier })
})

export const CodeHostBackend = Schema.Struct({
  id: Identifier,
  type: Schema.Literal("code_host"),
  configuration: Schema.Struct({ registryPath: AbsolutePath }),
  drivers: Schema.Struct({ repo: Identifier })
})

export const SandboxAuth = Schema.Union(
  Schema.Struct({ mode: Schema.Literal("unauthenticated") }),
  Schema.Struct({ mode: Schema.Literal("bearerTokenFile"), path: AbsolutePath })
)

const SandboxGatewayFields = Schema.Struct({
  endpoint: Schema.optionalWith(Endpoint, { exact: true }),
  serviceName: Schema.optionalWith(DnsName, { exact: true }),
  scheme: Schema.optionalWith(Schema.Literal("http", "https"), { exact: true }),
  port: Schema.optionalWith(boundedInt(1, 65535), { exact: true }),
  auth: SandboxAuth,
  requestTimeoutMs: Schema.optionalWith(boundedInt(1000, 30000), { exact: true, default: () => 10000 }),
  rootCertificatePath: Schema.optionalWith(AbsolutePath, { exact: true }),
  insecureTransport: Schema.optionalWith(Schema.Literal("network-policy"), { exact: true }),
  /**
   * The gateway's egress proxy (`http://host:port`) a dedicated Agent's harness sends
   * credential_source model calls through (docs/decisions/kubernetes.md "Dedicated execution");
   * absent: credential_source Agents cannot start (NOT_IMPLEMENTED).
   */
  egress: Schema.optionalWith(Schema.String.pipe(Schema.pattern(/^http:\/\/[^/?#@]+$/)), { exact: true })
})

/** Whether the connection to the sandbox gateway is TLS. */
export const sandboxUsesTls = (c: typeof SandboxGatewayFields.Type): boolean => {
  if (c.endpoint !== undefined && /^https?:\/\//.test(c.endpoint)) return c.endpoint.startsWith("https://")
  const scheme = c.scheme ?? (c.rootCertificatePath !== undefined ? "https" : "http")
  return scheme === "https"
}

/**
 * Where the Credential Gateway's gRPC service is reached (SPEC 2.15): an `endpoint` as given
 * (an origin's default port is its scheme's), or `serviceName` with `scheme` (default `https`
 * only when `rootCertificatePath` is set) and `port` (default 8080).
 */
export const sandboxGatewayTarget = (c: typeof SandboxGatewayFields.Type): { readonly address: string; readonly tls: boolean } => {
  const tls = sandboxUsesTls(c)
  if (c.endpoint !== undefined) {
    if (!/^https?:\/\//.test(c.endpoint)) return { address: c.endpoint, tls }
    const url = new URL(c.endpoint)
    return { address: `${url.hostname}:${url.port === "" ? (tls ? "443" : "80") : url.port}`, tls }
  }
  return { address: `${c.serviceName ?? ""}:${c.port ?? 8080}`, tls }
}

export const SandboxGatewayConfiguration = SandboxGatewayFields.pipe(
  Schema.filter((c) => {
    const issues: Array<Schema.FilterIssue> = []
    if ((c.endpoint === undefined) === (c.serviceName === undefined)) {
      issues.push({ path: ["endpoint"], message: "exactly one of endpoint or serviceName is required" })
    }
    if (c.endpoint !== undefined) {
      for (const key of ["scheme", "port"] as const) {
        if (c[key] !== undefined) issues.push({ path: [key], message: "is only allowed with serviceName" })
      }
    }
    const secure = sandboxUsesTls(c) && c.auth.mode === "bearerTokenFile"
    if (!secure && c.insecureTransport === undefined) {
      issues.push({
        path: ["insecureTransport"],
        message: `must be "network-policy" when the connection lacks TLS or bearer authentication`
      })
    }
    if (secure && c.insecureTransport !== undefined) {
      issues.push({ path: ["insecureTransport"], message: "is only allowed when the connection lacks TLS or bearer authentication" })
    }
    return issues
  })
)

export type SandboxGatewayConfiguration = typeof SandboxGatewayConfiguration.Type

export const SandboxGatewayBackend = Schema.Struct({
  id: Identifier,
  type: Schema.Literal("sandbox_gateway"),
  configuration: SandboxGatewayConfiguration,
  drivers: Schema.Struct({ sandbox: Identifier, credentialGateway: Identifier })
})

export const Backend = Schema.Union(ModelAccountsBackend, CodeHostBackend, SandboxGatewayBackend)
export type Backend = typeof Backend.Type

