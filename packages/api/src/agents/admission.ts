/**
 * The checks an Agent draft passes on create, update and deploy (SPEC 2.4, 2.5, 4.4, 7.3):
 * the Configuration, the Backend, the execution mode the Compute Driver offers, the harness
 * binding and its Secret, and plugin selections. Each failure is the SPEC's status and code;
 * nothing here writes.
 */
import { SqlClient } from "@effect/sql"
import { InstallationConfiguration } from "@svc/core/config"
import { NotFound, NotImplemented, ResourceConflict } from "@svc/core/errors"
import { Effect } from "effect"
import { authorize } from "../auth/authorize.js"
import { configurationRef } from "../configurations/configurations.js"
import { capabilitiesOf } from "../installation/capabilities.js"
import { secretRef } from "../secrets/policy.js"
import type { ExecutionMode, HarnessAuth, Plugins } from "@svc/core/api"

export interface Draft {
  readonly configurationId: string
  readonly executionMode: ExecutionMode
  readonly backendId: string | null
  readonly harnessAuth: HarnessAuth | null
  readonly plugins: Plugins | undefined
}

/** A draft's settings without its Configuration (Agent provisioning creates that one). */
export type LaunchDraft = Omit<Draft, "configurationId">

/** The Secret a harness binding reads, if any. */
export const harnessSecretId = (auth: HarnessAuth | null): string | undefined =>
  auth !== null && (auth.method === "api_key" || auth.method === "direct_token") ? auth.source.id : undefined

/** SPEC 4.4: the caller's exact `read` on a same-Namespace Configuration of kind `agent`. */
export const admitConfiguration = (namespaceId: string, configurationId: string) =>
  Effect.gen(function* () {
    yield* authorize("configuration:read", configurationRef(namespaceId, configurationId))
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ kind: string }>`
      SELECT kind FROM configurations WHERE id = ${configurationId} AND namespace_id = ${namespaceId} FOR KEY SHARE
    `.pipe(Effect.orDie)
    if (rows[0] === undefined) return yield* new NotFound({ message: "The Configuration does not exist in this Namespace." })
    if (rows[0].kind !== "agent") return yield* new ResourceConflict({ message: "The Configuration is not of kind agent." })
  })

/** The Secret exists in this Namespace and the caller may `operate` it (SPEC 2.5). */
export const admitSecret = (namespaceId: string, source: { readonly namespaceId: string; readonly id: string }) =>
  Effect.gen(function* () {
    if (source.namespaceId !== namespaceId) {
      return yield* new NotFound({ message: "The harness Secret does not exist in this Namespace." })
    }
    yield* authorize("secret:operate", secretRef(namespaceId, source.id))
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql`SELECT 1 FROM secrets WHERE id = ${source.id} AND namespace_id = ${namespaceId} FOR KEY SHARE`.pipe(Effect.orDie)
    if (rows.length === 0) return yield* new NotFound({ message: "The harness Secret does not exist in this Namespace." })
  })

/** The harness binding against what this Installation can run (SPEC 2.5, 4.6). */
const admitHarness = (namespaceId: string, draft: LaunchDraft, dedicatedOffered: boolean) =>
  Effect.gen(function* () {
    const auth = draft.harnessAuth
    if (auth === null) return
    const installation = yield* InstallationConfiguration
    const needsDedicated = auth.method === "direct_token" || auth.method === "provider_service_account" || auth.method === "credential_source"
    if (needsDedicated && (!dedicatedOffered || draft.executionMode !== "dedicated")) {
      return yield* new ResourceConflict({
        message: `Harness authentication ${auth.method} needs dedicated execution, which this Agent or Installation does not offer.`
      })
    }
    if (auth.method === "runtime" && (installation.drivers.compute.id !== "local" || draft.executionMode !== "embedded")) {
      return yield* new ResourceConflict({ message: "Harness authentication runtime needs host-embedded execution." })
    }
    if (auth.method === "credential_source" && installation.drivers.credentialGateway === undefined) {
      return yield* new ResourceConflict({ message: "Harness authentication credential_source needs a Credential Gateway." })
    }
    if (auth.method === "provider_service_account") {
      return yield* new NotFound({ message: "The service account does not exist in this Namespace." })
    }
    const secretId = harnessSecretId(auth)
    if (secretId !== undefined && (auth.method === "api_key" || auth.method === "direct_token")) {
      yield* admitSecret(namespaceId, auth.source)
    }
  })

/** Every check of a draft's launch settings, in the order SPEC 7.3 lists its conditions. */
export const admitLaunchSettings = (namespaceId: string, draft: LaunchDraft) =>
  Effect.gen(function* () {
    const installation = yield* InstallationConfiguration
    if (draft.backendId !== null) {
      const backend = installation.backends.find((b) => b.id === draft.backendId)
      if (backend === undefined) return yield* new NotFound({ message: "The Backend does not exist." })
      if (backend.type !== "model_accounts") {
        return yield* new ResourceConflict({ message: "The Backend is not of type model_accounts." })
      }
    }
    const modes = capabilitiesOf(installation).agentProvisioning.executionModes as ReadonlyArray<string>
    if (!modes.includes(draft.executionMode)) {
      return yield* new ResourceConflict({ message: `Execution mode ${draft.executionMode} is not offered by this Installation.` })
    }
    yield* admitHarness(namespaceId, draft, modes.includes("dedicated"))
    if (draft.plugins !== undefined && Object.keys(draft.plugins).length > 0 && installation.drivers.plugin === undefined) {
      return yield* new NotImplemented({ message: "Plugin selections need a Plugin Driver, and none is selected." })
    }
  })

/** Every check of a draft: its Configuration, then its launch settings. */
export const admitDraft = (namespaceId: string, draft: Draft) =>
  Effect.zipRight(admitConfiguration(namespaceId, draft.configurationId), admitLaunchSettings(namespaceId, draft))
