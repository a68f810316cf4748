/**
 * A real credential service and a loopback code host for the repository-options tests: the
 * registry approves `widgets` for Namespaces A (read/write) and B (read), `gadgets` for A only,
 * `ghosts` (which the host does not describe) for A, `sprockets` and `cogs` for B. The Repo Driver of the API under test
 * talks to the service's control socket.
 */
import { SqlClient } from "@effect/sql"
import { Migrations } from "@svc/core/db"
import { makeCodehostRepoDriver } from "@svc/core/drivers/repo"
import { Effect } from "effect"
import * as fs from "node:fs"
import {
  NS_A,
  NS_B,
  type RunningCredentialService,
  sampleRegistry,
  startCredentialService,
  writeCredentialServiceFiles
} from "../../../../testing/credentialService.js"
import { createDatabase, dropDatabase, pgClientLayer } from "../../../../testing/database.js"
import { type FakeCodeHost, startFakeCodeHost } from "../../../../testing/fakeCodeHost.js"
import { TestServer } from "../../../../testing/server.js"
import { seedAdmin, send } from "./iamServer.js"

export const WIDGETS_DESCRIPTION = "Widgets and more"

export const optionsRegistry = sampleRegistry({
  repositories: [
    ...sampleRegistry().repositories,
    { repositoryRef: "gadgets", repositoryId: "1002", repository: "acme/gadgets", namespaces: [{ namespaceId: NS_A, profiles: ["git-full"] }] },
    { repositoryRef: "ghosts", repositoryId: "1003", repository: "acme/ghosts", namespaces: [{ namespaceId: NS_A, profiles: ["git-read"] }] },
    // Each used by one test only, so it is not in the description cache when that test starts.
    { repositoryRef: "sprockets", repositoryId: "1004", repository: "acme/sprockets", namespaces: [{ namespaceId: NS_B, profiles: ["git-read"] }] },
    { repositoryRef: "cogs", repositoryId: "1005", repository: "acme/cogs", namespaces: [{ namespaceId: NS_B, profiles: ["git-read"] }] }
  ]
})

export const optionsFiles = writeCredentialServiceFiles(optionsRegistry)

export const optionsDriver = makeCodehostRepoDriver(
  { id: "codehost", controlSocket: optionsFiles.socketPath, sessionDurationSeconds: 900 },
  optionsRegistry
)

export interface OptionsUpstream {
  readonly host: FakeCodeHost
  readonly service: RunningCredentialService
  readonly stop: () => Promise<void>
}

/** Starts the code host and the credential service (its own database) for the suite. */
export const startOptionsUpstream = async (): Promise<OptionsUpstream> => {
  const host = await startFakeCodeHost([
    { id: 1001, fullName: "acme/widgets", description: `  ${WIDGETS_DESCRIPTION}\n` },
    { id: 1002, fullName: "acme/gadgets", description: "G".repeat(600) },
    { id: 1003, fullName: "acme/ghosts", description: "" },
    { id: 1004, fullName: "acme/sprockets", description: "Sprockets" },
    { id: 1005, fullName: "acme/cogs", description: "Cogs" }
  ])
  // The files were written before the host existed: the service must sign with the host's App key.
  fs.writeFileSync(optionsFiles.appKeyPath, host.privateKeyPem, { mode: 0o600 })
  const databaseUrl = await createDatabase()
  await Effect.runPromise(Effect.provide(Migrations.run, pgClientLayer(databaseUrl)))
  const service = await startCredentialService(optionsFiles, databaseUrl, {
    SVC_DEV_UPSTREAMS: JSON.stringify({ "https://api.github.com": host.url, "https://github.com": host.url })
  })
  return {
    host,
    service,
    stop: async () => {
      await service.process.stop()
      await host.close()
      await dropDatabase(databaseUrl)
    }
  }
}

/** A ready Namespace row with this id (the registry names fixed ids) and an administrator. */
export const optionsFixture = (namespaceId: string, label: string, status = "ready") =>
  Effect.gen(function* () {
    const { baseUrl } = yield* TestServer
    const sql = yield* SqlClient.SqlClient
    yield* sql`INSERT INTO namespaces (id, name, status) VALUES (${namespaceId}, ${label}, ${status})
      ON CONFLICT (id) DO UPDATE SET status = EXCLUDED.status`
    const admin = yield* seedAdmin(`options-${label}-${crypto.randomUUID()}@example.com`)
    const options = (query = "", headers = admin.headers) =>
      send(baseUrl, "GET", `/namespaces/${namespaceId}/agents/repository-options${query}`, headers)
    return { sql, admin, options, baseUrl }
  })

export { NS_A, NS_B }
