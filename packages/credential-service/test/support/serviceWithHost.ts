/**
 * One real credential service per test file, on its own migrated database, with the loopback
 * code host behind both fixed origins, and a way to admit sessions through the control socket.
 */
import { Migrations } from "@svc/core/db"
import { Effect } from "effect"
import { afterAll, beforeAll, expect } from "vitest"
import {
  admissionId,
  frozenGrant,
  NS_A,
  openSession,
  type RunningCredentialService,
  sampleRegistry,
  startCredentialService,
  writeCredentialServiceFiles
} from "../../../../testing/credentialService.js"
import { createDatabase, dropDatabase, pgClientLayer } from "../../../../testing/database.js"
import { type FakeCodeHost, startFakeCodeHost } from "../../../../testing/fakeCodeHost.js"

export interface ServiceWithHost {
  readonly registry: ReturnType<typeof sampleRegistry>
  readonly host: () => FakeCodeHost
  readonly service: () => RunningCredentialService
  readonly databaseUrl: () => string
  /** Admits a `git-read` session on acme/widgets for Namespace A. */
  readonly open: () => Promise<{ readonly bearer: string; readonly sessionId: string }>
}

/** Registers the file's beforeAll/afterAll; `cleanup` runs first in afterAll (undo what tests told the host). */
export const useServiceWithHost = (cleanup: (host: FakeCodeHost) => void = () => {}): ServiceWithHost => {
  const registry = sampleRegistry()
  let host: FakeCodeHost | undefined
  let files: ReturnType<typeof writeCredentialServiceFiles> | undefined
  let databaseUrl = ""
  let service: RunningCredentialService | undefined

  beforeAll(async () => {
    host = await startFakeCodeHost([{ id: 1001, fullName: "acme/widgets", description: "Widgets" }])
    files = writeCredentialServiceFiles(registry, host.privateKeyPem)
    databaseUrl = await createDatabase()
    await Effect.runPromise(Effect.provide(Migrations.run, pgClientLayer(databaseUrl)))
    service = await startCredentialService(files, databaseUrl, {
      SVC_DEV_UPSTREAMS: JSON.stringify({ "https://api.github.com": host.url, "https://github.com": host.url })
    })
  }, 120_000)

  afterAll(async () => {
    if (host !== undefined) cleanup(host)
    await service?.process.stop()
    await host?.close()
    if (databaseUrl !== "") await dropDatabase(databaseUrl)
  })

  const started = <A>(value: A | undefined): A => {
    if (value === undefined) throw new Error("the credential service is not started yet")
    return value
  }

  return {
    registry,
    host: () => started(host),
    service: () => started(service),
    databaseUrl: () => databaseUrl,
    open: async () => {
      const response = await openSession(started(files).socketPath, admissionId(), {
        durationSeconds: 600,
        grant: frozenGrant(registry, NS_A, "widgets", "git-read")
      })
      expect(response.status).toBe(201)
      const data = response.body.data as { bearer: string; session: { sessionId: string } }
      return { bearer: data.bearer, sessionId: data.session.sessionId }
    }
  }
}
