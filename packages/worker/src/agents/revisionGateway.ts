/**
 * Starting a revision's gateway, shared by `agent.deploy` and `agent.recover`: read the revision's
 * snapshot, reveal its Secrets (only here, just before the start; they reach the gateway only as
 * environment variables of its process), and start or re-adopt the gateway through the Compute
 * Driver while holding the Agent's gateway lock.
 *
 * The lock is a PostgreSQL session advisory lock on a reserved connection, taken with
 * `pg_try_advisory_lock`: two workers never start or replace one Agent's gateway at the same
 * time (the local driver does not serialise that itself), and a worker that dies loses its
 * connection and with it the lock, so a crash never leaves an Agent locked.
 */
import { SqlClient } from "@effect/sql"
import { ComputeDriver, type ComputeError } from "@svc/core/drivers/compute"
import { SecretDriver } from "@svc/core/drivers/secret"
import { AgentsRepo, type GatewaySnapshot, RevisionsRepo, SecretsRepo } from "@svc/core/db"
import type { AgentId, NamespaceId, RevisionId } from "@svc/core/schema"
import { deliveredSecrets, type Recipient } from "@svc/core/tenancy"
import { ProcessConfiguration } from "@svc/core/config"
import { Effect, Layer, Option, Redacted } from "effect"
import { WorkFailure } from "../engine/failure.js"
import { preparePlugins } from "./plugins.js"
import { repositoryEnvironment } from "../repositories/sessions.js"
import { harnessSpec } from "./harness.js"
import { exportedFn } from "@svc/core/observability"

export { MODEL_API_KEY_VARIABLE } from "@svc/core/tenancy"

export const AgentWorkCodes = {
  DEPENDENCY_UNAVAILABLE: "DEPENDENCY_UNAVAILABLE",
  NOT_IMPLEMENTED: "NOT_IMPLEMENTED",
  AGENT_DELETING: "AGENT_DELETING",
  AGENT_BUSY: "AGENT_BUSY",
  REVISION_SUPERSEDED: "REVISION_SUPERSEDED",
  SECRET_UNAVAILABLE: "SECRET_UNAVAILABLE"
} as const

export const databaseFailure = (cause: unknown) =>
  Effect.logWarning("agent reconciler: database unavailable", { cause: String(cause) }).pipe(
    Effect.zipRight(new WorkFailure({ code: AgentWorkCodes.DEPENDENCY_UNAVAILABLE, message: "The database was unavailable; the work will be retried." }))
  )

export const driverFailure = (error: ComputeError): WorkFailure =>
  error._tag === "ComputeNotImplemented"
    ? new WorkFailure({ code: AgentWorkCodes.NOT_IMPLEMENTED, message: "The selected Compute Driver does not implement this operation.", permanent: true })
    : new WorkFailure({ code: error.code, message: error.message, permanent: error.permanent })

/** What the worker reads of a revision's snapshot. */
export type Snapshot = GatewaySnapshot

/** What starting a gateway reads and writes; provided here, so callers need only an SqlClient. */
const GatewayRepos = Layer.mergeAll(AgentsRepo.Default, RevisionsRepo.Default, SecretsRepo.Default)

/** The revision's snapshot, or `undefined` when the revision is gone (its Agent was removed). */
export const revisionSnapshot = (revisionId: RevisionId) =>
  Effect.flatMap(RevisionsRepo, (revisions) => revisions.gatewaySnapshot(revisionId)).pipe(
    Effect.catchTag("SqlError", databaseFailure),
    Effect.provide(GatewayRepos)
  )

/**
 * The revision's Secrets (`deliveredSecrets`), read in one query and revealed, by recipient: the
 * gateway's environment, and the harness's (dedicated execution; never the gateway's).
 */
export const revealEnvironment = (namespaceId: NamespaceId, snapshot: Snapshot) =>
  Effect.gen(function* () {
    const stored = yield* SecretsRepo
    const secrets = yield* SecretDriver
    const wanted = deliveredSecrets(snapshot.secretBindings, snapshot.harness.auth)
    const env: Record<Recipient, Record<string, Redacted.Redacted<string>>> = { gateway: {}, harness: {} }
    if (wanted.length === 0) return env
    const rows = yield* stored.sealed({ namespace_id: namespaceId, ids: [...new Set(wanted.map((w) => w.secretId))] })
    const byId = new Map<string, (typeof rows)[number]>(rows.map((row) => [row.id, row]))
    for (const { destination, secretId, to } of wanted) {
      const row = byId.get(secretId)
      const unavailable = new WorkFailure({
        code: AgentWorkCodes.SECRET_UNAVAILABLE,
        message: "A Secret the revision delivers could not be read.",
        permanent: row === undefined
      })
      if (row === undefined) return yield* unavailable
      env[to][destination] = yield* secrets.reveal({ keyId: row.key_id, nonce: row.nonce, ciphertext: row.ciphertext, tag: row.tag }).pipe(
        Effect.tapError((error) => Effect.logWarning("a revision's Secret could not be revealed", { secretId, reason: error._tag })),
        Effect.mapError(() => new WorkFailure({ ...unavailable, permanent: true }))
      )
    }
    return env
  }).pipe(Effect.catchTag("SqlError", databaseFailure), Effect.provide(GatewayRepos))

/** Thrown by `withAgentLock` when another worker holds the Agent's gateway lock. */
export const agentBusy = () =>
  new WorkFailure({ code: AgentWorkCodes.AGENT_BUSY, message: "Another worker is changing this Agent's gateway; the work will be retried." })

/**
 * Runs `effect` holding the Agent's gateway lock, or fails with `AGENT_BUSY` (transient) at once
 * when another worker holds it. The lock is released when `effect` ends, however it ends.
 */
export const withAgentLock = <A, R>(agentId: string, effect: Effect.Effect<A, WorkFailure, R>) =>
  Effect.scoped(
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const connection = yield* sql.reserve
      const key = `svc:agent-gateway:${agentId}`
      const rows = yield* connection.execute("SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS locked", [key], undefined)
      if (rows[0]?.locked !== true) return yield* agentBusy()
      yield* Effect.addFinalizer(() =>
        connection.execute("SELECT pg_advisory_unlock(hashtextextended($1, 0))", [key], undefined).pipe(Effect.ignore)
      )
      return yield* effect
    }).pipe(Effect.catchTag("SqlError", databaseFailure))
  )

/** SPEC 2.7 `runtimeFailure`: which check a failed start stopped at, from the driver's code. */
export const runtimeCheckOf = (code: string): { readonly component: string; readonly check: string } => {
  switch (code) {
    case "GATEWAY_START_TIMEOUT":
      return { component: "gateway", check: "readiness" }
    case "GATEWAY_EXITED":
      return { component: "gateway", check: "process" }
    case "GATEWAY_CONFIG_REJECTED":
      return { component: "gateway", check: "configuration" }
    case "MODEL_PROBE_FAILED":
      return { component: "model", check: "probe" }
    case "RUNTIME_AUTHENTICATION_FAILED":
      return { component: "model", check: "authentication" }
    case "RUNTIME_NOT_INSTALLED":
      return { component: "runtime", check: "installed" }
    case "NAMESPACE_RUNTIME_MISSING":
      return { component: "namespace", check: "runtime" }
    default:
      return { component: "gateway", check: "start" }
  }
}

export interface RevisionStart {
  readonly namespaceId: NamespaceId
  readonly agentId: AgentId
  readonly revisionId: RevisionId
  readonly snapshot: Snapshot
  /** Note a failed start on the revision (deployments do; recovery leaves revisions alone). */
  readonly recordFailure: boolean
}

/**
 * Starts (or re-adopts: the driver adopts a live gateway of the same revision) the revision's
 * gateway with its Secrets and, unless the harness is `runtime`, a model probe. The caller holds
 * the Agent's gateway lock. A failure of the driver can be noted on the revision.
 */
export const startRevisionGateway = exportedFn("Agents.startRevisionGateway")(function* (start: RevisionStart) {
  const driver = yield* ComputeDriver
  const repository = yield* repositoryEnvironment({ namespaceId: start.namespaceId, agentId: start.agentId, revisionId: start.revisionId })
  const revealed = yield* revealEnvironment(start.namespaceId, start.snapshot)
  const harness = yield* harnessSpec(start.namespaceId, start.snapshot, revealed.harness).pipe(Effect.catchTag("SqlError", databaseFailure))
  const env = {
    ...revealed.gateway,
    ...(start.snapshot.harness.auth?.method === "runtime" ? yield* hostEnvironment : {}),
    // Client material of the revision's repository sessions (paths only; the bearer stays in its file).
    ...Object.fromEntries(Object.entries(repository).map(([name, value]) => [name, Redacted.make(value)]))
  }
  const probe = start.snapshot.harness.auth?.method === "runtime" ? undefined : {}
  // Staged until the first activation deletes them (SPEC 4.4 rule 3): never replayed afterwards.
  const agents = yield* AgentsRepo
  const staged = yield* agents.stagedFiles(start.agentId).pipe(Effect.catchTag("SqlError", databaseFailure))
  const prepared = yield* preparePlugins(start.snapshot)
  yield* driver.startGateway({
    namespaceId: start.namespaceId,
    agentId: start.agentId,
    revisionId: start.revisionId,
    values: start.snapshot.configuration,
    env,
    modelProbe: probe,
    initialFiles: Option.getOrUndefined(staged),
    plugins: prepared.plugins,
    harness
  }).pipe(
    Effect.mapError(driverFailure),
    Effect.tapError((failure) => start.recordFailure ? recordRuntimeFailure(start.revisionId, failure) : Effect.void)
  )
  if (start.recordFailure) {
    const revisions = yield* RevisionsRepo
    yield* revisions.recordWarnings(start.revisionId, prepared.warnings).pipe(Effect.catchTag("SqlError", databaseFailure), Effect.catchTag("ParseError", Effect.die))
  }
}, Effect.provide(GatewayRepos))

/**
 * `runtime` harness authentication (SPEC 2.5): the operator's credentials in this host's
 * environment, passed through by name (`SVC_GATEWAY_HOST_ENV`) to the gateway's process only.
 * They are never read into storage, a log line or a revision.
 */
const hostEnvironment = Effect.map(Effect.serviceOption(ProcessConfiguration), (config) => {
  const names = Option.isSome(config) ? (config.value.gatewayHostEnvironment ?? []) : []
  const env: Record<string, Redacted.Redacted<string>> = {}
  for (const name of names) {
    const value = process.env[name]
    if (value !== undefined && value.length > 0) env[name] = Redacted.make(value)
  }
  return env
})

/** Notes on the revision which check its latest failed start stopped at (SPEC 2.7 `runtimeFailure`). */
export const recordRuntimeFailure = (revisionId: RevisionId, failure: WorkFailure) =>
  Effect.gen(function* () {
    const revisions = yield* RevisionsRepo
    const runtimeFailure = { ...runtimeCheckOf(failure.code), checkedAt: new Date().toISOString(), code: failure.code }
    yield* revisions.recordRuntimeFailure(revisionId, runtimeFailure)
  }).pipe(Effect.provide(GatewayRepos), Effect.catchAll((cause) => Effect.logWarning("a revision's runtime failure could not be recorded", { revisionId, cause: String(cause) })))
