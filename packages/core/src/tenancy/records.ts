/**
 * The rows a new Configuration and a new Agent consist of, written with the ambient SqlClient
 * (so inside the caller's transaction) together with their audit records. One writer for the
 * API's `POST .../configurations` and `POST .../agents` and for the worker's Agent provisioning
 * (SPEC 2.13), so a provisioned Agent is exactly what a direct create makes. Authorization and
 * admission are the callers'; these only write. The Configuration's rows go through
 * `ConfigurationsRepo`, built here from the ambient SqlClient so that callers (the worker's
 * provisioning among them) need nothing else.
 */
import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Schema } from "effect"
import { recordAudit } from "../audit/index.js"
import { ConfigurationsRepo } from "../db/repos/configurations.js"
import { ConfigurationId, NamespaceId, SecretId } from "../schema/ids.js"

type AuditDetails = Record<string, string | number | boolean | null | ReadonlyArray<string>>

/** Who the audit records name, and what they add to the standard details. */
export interface RecordContext {
  readonly actorPrincipalId: string | null
  readonly auditDetails?: AuditDetails | undefined
}

export interface NewConfiguration {
  readonly id: string
  readonly namespaceId: string
  readonly values: Readonly<Record<string, unknown>>
  readonly secretBindings: Readonly<Record<string, { readonly source: { readonly id: string } }>>
}

/** The distinct Secrets a Configuration's bindings deliver, sorted. */
export const boundSecretIds = <Id extends string>(
  bindings: Readonly<Record<string, { readonly source: { readonly id: Id } }>>
): ReadonlyArray<Id> => [...new Set(Object.values(bindings).map((binding) => binding.source.id))].sort()

/** The callers made these ids (or decoded them from a request): one that does not decode is a defect. */
const configurationKey = (input: { readonly id: string; readonly namespaceId: string }) =>
  Effect.all({
    id: Schema.decode(ConfigurationId)(input.id),
    namespaceId: Schema.decode(NamespaceId)(input.namespaceId)
  }).pipe(Effect.orDie)

const secretIdsOf = (bindings: NewConfiguration["secretBindings"]) =>
  Schema.decode(Schema.Array(SecretId))(boundSecretIds(bindings)).pipe(Effect.orDie)

/** Replaces the `configuration_secret_refs` rows of a Configuration (foreign keys to `secrets`). */
export const writeConfigurationSecretRefs = (
  configurationId: string,
  bindings: NewConfiguration["secretBindings"]
): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function* () {
    const repo = yield* ConfigurationsRepo
    const id = yield* Schema.decode(ConfigurationId)(configurationId).pipe(Effect.orDie)
    yield* repo.replaceSecretRefs({ configuration_id: id, secret_ids: yield* secretIdsOf(bindings) })
  }).pipe(Effect.provide(ConfigurationsRepo.Default))

/** A Configuration of kind `agent`, generation 1, its Secret references and `configuration.created`. */
export const insertConfiguration = (
  input: NewConfiguration,
  context: RecordContext
): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function* () {
    const repo = yield* ConfigurationsRepo
    const { id, namespaceId } = yield* configurationKey(input)
    yield* repo.insert({ id, namespace_id: namespaceId, values: input.values, secret_bindings: input.secretBindings })
    yield* repo.replaceSecretRefs({ configuration_id: id, secret_ids: yield* secretIdsOf(input.secretBindings) })
    yield* recordAudit({
      kind: "configuration.created",
      outcome: "success",
      actorPrincipalId: context.actorPrincipalId,
      namespaceId: input.namespaceId,
      resource: { kind: "configuration", id: input.id },
      details: { kind: "agent", generation: 1, boundSecretIds: boundSecretIds(input.secretBindings), ...context.auditDetails }
    })
  }).pipe(Effect.provide(ConfigurationsRepo.Default))

export interface NewAgent {
  readonly id: string
  /** The Agent's own service principal, created with it. */
  readonly servicePrincipalId: string
  readonly namespaceId: string
  readonly name: string
  readonly configurationId: string
  readonly executionMode: "embedded" | "dedicated"
  readonly backendId: string | null
  /** The saved draft settings as admitted (`harnessAuth` always present, null for none). */
  readonly settings: Readonly<Record<string, unknown>>
  readonly workspaceDefaultsId: string | null
  /** Staged privately until the first activation (SPEC 4.4 rule 3); null or empty for none. */
  readonly initialWorkspaceFiles: Readonly<Record<string, string>> | null
  /** The Secret the harness binding reads, pinned by `agent_secret_refs`. */
  readonly harnessSecretId: string | null
}

/** Replaces the Secrets an Agent's draft pins (its harness Secret). */
export const pinAgentSecrets = (agentId: string, harnessSecretId: string | null) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`DELETE FROM agent_secret_refs WHERE agent_id = ${agentId}`
    if (harnessSecretId !== null) yield* sql`INSERT INTO agent_secret_refs (agent_id, secret_id) VALUES (${agentId}, ${harnessSecretId})`
  })

/**
 * An Agent (active, desired `stopped`, no revision), its `agent` principal, pinned harness
 * Secret, staged initial files and `agent.created`. A taken name fails with the unique
 * violation of `agents (namespace_id, name)`.
 */
export const insertAgent = (input: NewAgent, context: RecordContext): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`
      INSERT INTO principals (id, kind, namespace_id, name) VALUES (${input.servicePrincipalId}, 'agent', ${input.namespaceId}, ${input.name})
    `
    yield* sql`
      INSERT INTO agents (id, namespace_id, name, configuration_id, service_principal_id, execution_mode, backend_id,
        settings, workspace_defaults_id)
      VALUES (${input.id}, ${input.namespaceId}, ${input.name}, ${input.configurationId}, ${input.servicePrincipalId},
        ${input.executionMode}, ${input.backendId}, ${JSON.stringify(input.settings)}::jsonb, ${input.workspaceDefaultsId})
    `
    yield* pinAgentSecrets(input.id, input.harnessSecretId)
    const files = input.initialWorkspaceFiles
    if (files !== null && Object.keys(files).length > 0) {
      yield* sql`INSERT INTO agent_initial_files (agent_id, files) VALUES (${input.id}, ${JSON.stringify(files)}::jsonb)`
    }
    yield* recordAudit({
      kind: "agent.created",
      outcome: "success",
      actorPrincipalId: context.actorPrincipalId,
      namespaceId: input.namespaceId,
      resource: { kind: "agent", id: input.id },
      details: { name: input.name, configurationId: input.configurationId, servicePrincipalId: input.servicePrincipalId, ...context.auditDetails }
    })
  })
