/**
 * One real credential service per test file, on its own migrated database, and a way to admit
 * sessions through the control socket. With `codeHost`, the loopback code host serves those
 * repositories behind both fixed origins and holds the App's key; without, the service has a fresh
 * key nobody else knows and no code host to reach.
 */
import type { RepositoryProfileName, RepositoryRegistry } from "@svc/core/config"
import { afterAll, beforeAll, expect } from "vitest"
import {
  admissionId,
  type CredentialServiceFiles,
  frozenGrant,
  NS_A,
  openSession,
  type RunningCredentialService,
  sampleRegistry,
  startCredentialService,
  writeCredentialServiceFiles
} from "../../../../testing/credentialService.js"
import { createMigratedDatabase, dropDatabase } from "../../../../testing/database.js"
import { type FakeCodeHost, type FakeRepository, startFakeCodeHost } from "../../../../testing/fakeCodeHost.js"

/** The sample registry's one repository, as the code host shows it. */
export const WIDGETS: FakeRepository = { id: 1001, fullName: "acme/widgets", description: "Widgets" }

export interface CredentialServiceOptions {
  readonly registry?: RepositoryRegistry
  /** The code host's repositories; absent: no code host. */
  readonly codeHost?: ReadonlyArray<FakeRepository>
  /** Runs first in afterAll when there is a code host (undo what tests told it). */
  readonly cleanup?: (host: FakeCodeHost) => void
}

export interface SessionGrant {
  readonly namespaceId?: string
  readonly repositoryRef?: string
  readonly profile?: RepositoryProfileName
}

export interface CredentialServiceWorld {
  readonly registry: RepositoryRegistry
  readonly host: () => FakeCodeHost
  readonly service: () => RunningCredentialService
  readonly socketPath: () => string
  readonly databaseUrl: () => string
  /** Starts the service again on the same files, database and listener port, as a deployment would; the running one must be stopped first. */
  readonly restart: () => Promise<RunningCredentialService>
  /** Admits a session for the grant (by default `git-read` on widgets for Namespace A) and expects 201. */
  readonly open: (grant?: SessionGrant) => Promise<{ readonly bearer: string; readonly sessionId: string }>
}

/** Registers the file's beforeAll/afterAll; a file's own afterAll registered later runs before these. */
export const useCredentialService = (options: CredentialServiceOptions = {}): CredentialServiceWorld => {
  const registry = options.registry ?? sampleRegistry()
  let host: FakeCodeHost | undefined
  let files: CredentialServiceFiles | undefined
  let databaseUrl = ""
  let service: RunningCredentialService | undefined

  const start = (listenPort?: string) =>
    startCredentialService(started(files), databaseUrl, {
      ...(host === undefined ? {} : { SVC_DEV_UPSTREAMS: JSON.stringify({ "https://api.github.com": host.url, "https://github.com": host.url }) }),
      ...(listenPort === undefined ? {} : { SVC_CREDENTIAL_LISTEN_PORT: listenPort })
    })

  beforeAll(async () => {
    if (options.codeHost !== undefined) host = await startFakeCodeHost(options.codeHost)
    files = writeCredentialServiceFiles(registry, host?.privateKeyPem)
    databaseUrl = await createMigratedDatabase()
    service = await start()
  }, 120_000)

  afterAll(async () => {
    if (host !== undefined) options.cleanup?.(host)
    await service?.process.stop()
    await host?.close()
    if (databaseUrl !== "") await dropDatabase(databaseUrl)
  })

  const started = <A>(value: A | undefined, what = "the credential service is not started yet"): A => {
    if (value === undefined) throw new Error(what)
    return value
  }

  return {
    registry,
    host: () => started(host, "no code host: started without one, or not yet"),
    service: () => started(service),
    socketPath: () => started(files).socketPath,
    databaseUrl: () => databaseUrl,
    restart: async () => {
      service = await start(new URL(started(service).listenerUrl).port)
      return service
    },
    open: async (grant = {}) => {
      const response = await openSession(started(files).socketPath, admissionId(), {
        durationSeconds: 600,
        grant: frozenGrant(registry, grant.namespaceId ?? NS_A, grant.repositoryRef ?? "widgets", grant.profile ?? "git-read")
      })
      expect(response.status).toBe(201)
      const data = response.body.data as { bearer: string; session: { sessionId: string } }
      return { bearer: data.bearer, sessionId: data.session.sessionId }
    }
  }
}
