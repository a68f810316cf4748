/**
 * A repository world for worker tests: the loopback code host serving `acme/widgets`, a real
 * credential service process against a migrated database, and the real `git` CLI run with
 * exactly a given environment (the one the worker hands a gateway), optionally as another Unix
 * user or inside another process's mount namespace.
 */
import { Migrations } from "@svc/core/db"
import type { RepositoryRegistry } from "@svc/core/config"
import { Effect } from "effect"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import {
  type RunningCredentialService,
  sampleRegistry,
  startCredentialService,
  writeCredentialServiceFiles
} from "./credentialService.js"
import { createDatabase, dropDatabase, pgClientLayer } from "./database.js"
import { type FakeCodeHost, startFakeCodeHost } from "./fakeCodeHost.js"
import { collectOutput, type GitResult } from "./gitClient.js"

export interface RepositoryWorld {
  readonly host: FakeCodeHost
  readonly files: ReturnType<typeof writeCredentialServiceFiles>
  readonly registry: RepositoryRegistry
  readonly service: () => RunningCredentialService
  /** Starts the credential service (again: same listener port and database) against `databaseUrl`. */
  readonly startService: (databaseUrl?: string) => Promise<RunningCredentialService>
  readonly stopService: () => Promise<void>
  readonly close: () => Promise<void>
}

/**
 * The code host and the credential service's files; the service starts against `databaseUrl`
 * when the caller knows it (`startService`). `close` stops both and removes the files.
 */
export const prepareRepositoryWorld = async (options: {
  /** The listener's loopback port, when the caller must know it before the service starts. */
  readonly listenPort?: number | undefined
} = {}): Promise<RepositoryWorld> => {
  const registry = sampleRegistry()
  const host = await startFakeCodeHost([{ id: 1001, fullName: "acme/widgets", description: "Widgets and more" }])
  const files = writeCredentialServiceFiles(registry, host.privateKeyPem)
  let databaseUrl: string | undefined
  let port: string | undefined = options.listenPort?.toString()
  let service: RunningCredentialService | undefined
  const start = async (url?: string) => {
    databaseUrl = url ?? databaseUrl
    if (databaseUrl === undefined) throw new Error("the credential service needs a database")
    service = await startCredentialService(files, databaseUrl, {
      SVC_DEV_UPSTREAMS: JSON.stringify({ "https://api.github.com": host.url, "https://github.com": host.url }),
      ...(port === undefined ? {} : { SVC_CREDENTIAL_LISTEN_PORT: port })
    })
    port = new URL(service.listenerUrl).port
    return service
  }
  return {
    host,
    files,
    registry,
    service: () => {
      if (service === undefined) throw new Error("the credential service is stopped")
      return service
    },
    startService: start,
    stopService: async () => {
      await service?.process.stop()
      service = undefined
    },
    close: async () => {
      await service?.process.stop()
      await host.close()
      fs.rmSync(files.dir, { recursive: true, force: true })
    }
  }
}

/** A prepared world with its own migrated database and the service started. */
export const startRepositoryWorld = async (): Promise<RepositoryWorld & { readonly databaseUrl: string }> => {
  const world = await prepareRepositoryWorld()
  const databaseUrl = await createDatabase()
  await Effect.runPromise(Effect.provide(Migrations.run, pgClientLayer(databaseUrl)))
  await world.startService(databaseUrl)
  return {
    ...world,
    databaseUrl,
    close: async () => {
      await world.close()
      await dropDatabase(databaseUrl)
    }
  }
}

/**
 * Runs a command with exactly `env` (nothing inherited), optionally prefixed (`setpriv ...`,
 * `nsenter ...`). Asynchronous: the loopback code host runs in this event loop.
 */
export const runWith = (
  env: Readonly<Record<string, string>>,
  argv: ReadonlyArray<string>,
  prefix: ReadonlyArray<string> = []
): Promise<GitResult> =>
  new Promise((resolve, reject) => {
    const [command, ...args] = [...prefix, "/usr/bin/env", "-i", ...Object.entries(env).map(([k, v]) => `${k}=${v}`), ...argv]
    const child = spawn(command!, args, { timeout: 60_000, stdio: ["ignore", "pipe", "pipe"] })
    collectOutput(child, resolve, reject)
  })

/** `setpriv` to a Unix user, as the `local` driver drops root for a gateway. */
export const asUser = (uid: number, gid: number): ReadonlyArray<string> =>
  ["/usr/bin/setpriv", `--reuid=${uid}`, `--regid=${gid}`, "--clear-groups", "--"]

/** The environment of a running process (`/proc/<pid>/environ`). */
export const processEnvironment = (pid: number): Record<string, string> => {
  const env: Record<string, string> = {}
  for (const entry of fs.readFileSync(`/proc/${pid}/environ`, "utf8").split("\0")) {
    const at = entry.indexOf("=")
    if (at > 0) env[entry.slice(0, at)] = entry.slice(at + 1)
  }
  return env
}

/** The listener's answer to a bearer alone (Basic, as git sends it) for `acme/widgets`. */
export const listenerStatus = (listenerUrl: string, bearer: string): Promise<number> =>
  fetch(`${listenerUrl}/acme/widgets.git/info/refs?service=git-upload-pack`, {
    headers: { authorization: `Basic ${Buffer.from(`x-access-token:${bearer}`).toString("base64")}` }
  }).then((r) => r.status)
