/**
 * A real credential service for tests: its registry and Installation configuration written to a
 * temporary directory, the `svc credential-service` process against a migrated test database,
 * and HTTP over its Unix control socket.
 */
import { grantFingerprint } from "@svc/core/drivers/repo"
import { approvedRepository, type RepositoryProfileName, type RepositoryRegistry } from "@svc/core/config"
import { generateKeyPairSync } from "node:crypto"
import * as fs from "node:fs"
import pg from "pg"
import * as http from "node:http"
import * as os from "node:os"
import * as path from "node:path"
import { freePort, svc, type SvcProcess } from "./process.js"

export const NS_A = "ns_0b6f4e52-7c4f-4d1e-9a59-2d3f3c1b2a10"
export const NS_B = "ns_1c7f5e63-8d5f-4e2f-8b6a-3e4f4d2c3b21"

/** A registry with one repository approved for Namespace A (read/write, pushes to agent/*) and B (read). */
export const sampleRegistry = (overrides: Partial<RepositoryRegistry> = {}): RepositoryRegistry => ({
  version: 1,
  backendId: "code",
  providerInstanceId: "github-test",
  appId: "4242",
  installationId: "777",
  maximumDurationSeconds: 3600,
  repositories: [
    {
      repositoryRef: "widgets",
      repositoryId: "1001",
      repository: "acme/widgets",
      namespaces: [
        { namespaceId: NS_A, profiles: ["git-read", "git-write"], pushRefAllowlist: ["refs/heads/agent/*"] },
        { namespaceId: NS_B, profiles: ["git-read"] }
      ]
    }
  ],
  ...overrides
})

/** The frozen grant the API would write into a revision. */
export const frozenGrant = (
  registry: RepositoryRegistry,
  namespaceId: string,
  repositoryRef: string,
  profile: RepositoryProfileName
) => {
  const approved = approvedRepository(registry, namespaceId, repositoryRef)
  if (approved === undefined) throw new Error(`${repositoryRef} is not approved for ${namespaceId}`)
  return { namespaceId, repositoryRef, profile, fingerprint: grantFingerprint({ registry, ...approved, profile }) }
}

export interface CredentialServiceFiles {
  readonly dir: string
  readonly registryPath: string
  readonly installationPath: string
  readonly socketPath: string
  readonly appKeyPath: string
}

/** Writes the registry and an Installation configuration with the code_host Backend. */
export const writeCredentialServiceFiles = (
  registry: RepositoryRegistry,
  /** The App's private key; absent: a fresh one nobody else knows. */
  privateKeyPem?: string
): CredentialServiceFiles => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "svc-creds-"))
  const appKeyPath = path.join(dir, "app-key.pem")
  fs.writeFileSync(
    appKeyPath,
    privateKeyPem ?? generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey.export({ type: "pkcs1", format: "pem" }),
    { mode: 0o600 }
  )
  const registryPath = path.join(dir, "registry.json")
  const installationPath = path.join(dir, "installation.json")
  const socketPath = path.join(dir, "run", "control.sock")
  fs.writeFileSync(registryPath, JSON.stringify(registry))
  fs.writeFileSync(installationPath, JSON.stringify({
    drivers: {
      repo: { id: "codehost", controlSocket: socketPath, sessionDurationSeconds: 3600, publicCaPath: path.join(dir, "ca.pem") }
    },
    backends: [{ id: registry.backendId, type: "code_host", configuration: { registryPath }, drivers: { repo: "codehost" } }]
  }))
  return { dir, registryPath, installationPath, socketPath, appKeyPath }
}

export interface RunningCredentialService {
  readonly process: SvcProcess
  readonly listenerUrl: string
}

/** Starts `svc credential-service` and waits for its control socket. */
export const startCredentialService = async (
  files: CredentialServiceFiles,
  databaseUrl: string,
  extraEnv: Record<string, string> = {}
): Promise<RunningCredentialService> => {
  const port = extraEnv.SVC_CREDENTIAL_LISTEN_PORT ?? String(await freePort())
  const proc = svc("credential-service", {
    SVC_DATA_DIR: files.dir,
    DATABASE_URL: databaseUrl,
    SVC_INSTALLATION_CONFIG: files.installationPath,
    SVC_CREDENTIAL_CONTROL_SOCKET: files.socketPath,
    SVC_CODEHOST_APP_KEY_PATH: files.appKeyPath,
    SVC_CREDENTIAL_LISTEN_PORT: port,
    SVC_LOG_FORMAT: "json",
    ...extraEnv
  })
  await proc.waitFor(/credential service control interface on/)
  await proc.waitFor(/credential service client listener on/)
  return { process: proc, listenerUrl: `http://127.0.0.1:${port}` }
}

export interface SocketResponse {
  readonly status: number
  readonly headers: http.IncomingHttpHeaders
  // Untyped on purpose: tests assert the exact JSON shape.
  readonly body: any
  readonly text: string
}

/** One HTTP request over a Unix socket. */
export const socketRequest = (
  socketPath: string,
  method: string,
  target: string,
  options: { readonly headers?: Record<string, string>; readonly body?: string | Buffer } = {}
): Promise<SocketResponse> =>
  new Promise((resolve, reject) => {
    const headers = options.body === undefined
      ? options.headers
      : { "content-length": String(Buffer.byteLength(options.body)), ...options.headers }
    const request = http.request({ socketPath, method, path: target, headers }, (response) => {
      const chunks: Array<Buffer> = []
      response.on("data", (chunk: Buffer) => chunks.push(chunk))
      response.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8")
        let body: unknown = undefined
        try {
          body = text.length > 0 ? JSON.parse(text) : undefined
        } catch {
          body = text
        }
        resolve({ status: response.statusCode ?? 0, headers: response.headers, body, text })
      })
    })
    request.on("error", reject)
    if (options.body !== undefined) request.write(options.body)
    request.end()
  })

/** A fresh admission id dated `ageMs` ago. */
export const admissionId = (ageMs = 0): string => `${Date.now() - ageMs}-${crypto.randomUUID()}`

/** `POST /v1/sessions` with a JSON body. */
export const openSession = (socketPath: string, id: string, body: unknown) =>
  socketRequest(socketPath, "POST", "/v1/sessions", {
    headers: { "content-type": "application/json", "x-admission-id": id },
    body: JSON.stringify(body)
  })

/** One SQL statement against a test database (for state assertions and fault injection). */
export const queryDatabase = async (url: string, sql: string, params: ReadonlyArray<unknown> = []) => {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return await client.query(sql, params as Array<unknown>)
  } finally {
    await client.end()
  }
}
