/**
 * The Compute Driver (DESIGN §8): where a Namespace's runtime space and its Agents' gateways live.
 * One `Context.Tag` with one Layer per implementation (`local` today, `kubernetes` later); the
 * process chooses the Layer from the Installation configuration (`ComputeDriver.fromConfiguration`).
 *
 * Every method is an idempotent convergence step, safe to repeat after a crash at any point:
 * the worker's reconcilers call them with at-least-once delivery.
 */
import { Context, Data, type Effect, type Redacted } from "effect"
import type { NamespaceId } from "../../schema/ids.js"
import type { HarnessSpec } from "./harness.js"

/** The Namespace as the driver sees it. */
export interface NamespaceRuntime {
  readonly id: NamespaceId
  /** An operator-prepared runtime namespace to bind (SPEC 2.3); never created nor removed by us. */
  readonly existingNamespace?: string | undefined
}

/**
 * A driver failure. `code` and `message` are safe, fixed texts (they are recorded on work items);
 * the native cause is only logged by the driver. `permanent`: retrying cannot help.
 */
export class ComputeFailure extends Data.TaggedError("ComputeFailure")<{
  readonly code: string
  readonly message: string
  readonly permanent: boolean
}> {}

/** A method this driver does not implement (yet). */
export class ComputeNotImplemented extends Data.TaggedError("ComputeNotImplemented")<{
  readonly driver: string
  readonly method: string
}> {}

export type ComputeError = ComputeFailure | ComputeNotImplemented

/** A plugin a revision's gateway loads (DESIGN §15): its package unpacked on this host, and its gates. */
export interface GatewayPlugin {
  /** The plugin's own id: its `plugins.entries` key. */
  readonly pluginId: string
  /** The verified, unpacked package (the Plugin Driver's host cache); the driver copies it. */
  readonly directory: string
  readonly deniedTools: ReadonlyArray<string>
  readonly hooks: Readonly<Record<string, boolean>>
}

/** What a revision's gateway needs to start. */
export interface GatewaySpec {
  readonly namespaceId: NamespaceId
  readonly agentId: string
  readonly revisionId: string
  /**
   * The Configuration's `values`: the native runtime configuration document (OpenClaw's
   * `openclaw.json` shape). The driver renders the file itself, merging in the settings it
   * enforces (port, token auth, loopback, no host command execution, ...).
   */
  readonly values: Readonly<Record<string, unknown>>
  /** Secrets for the gateway, as environment variables of that process only (never on disk). */
  readonly env: Readonly<Record<string, Redacted.Redacted<string>>>
  /**
   * Workspace files to put in place before the gateway's first execution (SPEC 4.4 rule 3:
   * `initialWorkspaceFiles`). The caller passes them only until the first activation, so they
   * are never replayed over later edits.
   */
  readonly initialFiles?: Readonly<Record<string, string>> | undefined
  /**
   * Dedicated execution's harness (SPEC 2.5): the model credential proxy next to the gateway,
   * with the credentials only it receives. Only a driver offering `dedicated` runs it; `local`
   * refuses a spec that has one.
   */
  readonly harness?: HarnessSpec | undefined
  /** The plugins to load, enabled; none when absent. */
  readonly plugins?: ReadonlyArray<GatewayPlugin> | undefined
  /**
   * When set, a start is only successful after one chat completion through the gateway; an
   * upstream credential rejection fails permanently with `RUNTIME_AUTHENTICATION_FAILED`.
   */
  readonly modelProbe?: {
    /** The backend model to probe (`provider/model`); the Agent's default model when absent. */
    readonly model?: string | undefined
  } | undefined
}

/** A revision's gateway, addressed by Agent and revision. */
export interface GatewayRef {
  readonly namespaceId: NamespaceId
  readonly agentId: string
  readonly revisionId: string
}

export type GatewayHealth = "starting" | "healthy" | "unhealthy" | "stopped" | "absent"

export interface DiagnosticsCheck {
  readonly name: string
  readonly status: "pass" | "warn" | "fail"
  readonly message: string
}

/** Where the native admin proxy reaches a gateway: never exposed publicly. */
export interface PrivateEndpoint {
  readonly url: string
  readonly token: string
}

/** One repository session's client material (DESIGN §12): how a gateway reaches its repository. */
export interface RepositoryClient {
  readonly sessionId: string
  /** `owner/name`, lowercase. */
  readonly repository: string
  /** The credential service's client listener origin. */
  readonly listenerUrl: string
  readonly bearer: Redacted.Redacted<string>
}

/**
 * Client material of a revision's repository sessions, kept where only the Agent's gateway can
 * read it. Every method is idempotent.
 */
export interface RepositoryClients {
  /** Puts one session's material in place for the revision (replacing that repository's). */
  readonly write: (gateway: GatewayRef, client: RepositoryClient) => Effect.Effect<void, ComputeError>
  /** The sessions whose bearer the revision's material holds. */
  readonly sessions: (gateway: GatewayRef) => Effect.Effect<ReadonlyArray<string>, ComputeError>
  /** Gateway environment pointing Git and the code-host CLI at the material; empty when there is none. */
  readonly environment: (gateway: GatewayRef) => Effect.Effect<Readonly<Record<string, string>>, ComputeError>
  /** The revisions of the Agent that have material. */
  readonly revisions: (agent: Omit<GatewayRef, "revisionId">) => Effect.Effect<ReadonlyArray<string>, ComputeError>
  /** Removes the revision's material. */
  readonly remove: (gateway: GatewayRef) => Effect.Effect<void, ComputeError>
}

export interface ComputeDriverShape {
  /** The selected implementation (`InstallationConfiguration.drivers.compute.id`). */
  readonly id: "local" | "kubernetes"
  /** Whether `existingNamespace` may be bound (SPEC 4.2: otherwise `POST /namespaces` answers 409). */
  readonly supportsExistingNamespace: boolean

  // Namespace half.
  /** Creates (or finds) the Namespace's runtime space. */
  readonly provisionNamespace: (namespace: NamespaceRuntime) => Effect.Effect<void, ComputeError>
  /** Removes the Namespace's runtime space; nothing there is success. Never removes an operator-owned one. */
  readonly teardownNamespace: (namespace: NamespaceRuntime) => Effect.Effect<void, ComputeError>

  // Agent half: one gateway per Agent, addressed by the revision it runs.
  /**
   * Starts a revision's gateway (replacing the Agent's gateway of another revision); succeeds once
   * it passes its health check (and the model probe, when asked). A gateway of this revision
   * that already runs is adopted, not restarted.
   */
  readonly startGateway: (spec: GatewaySpec) => Effect.Effect<void, ComputeError>
  readonly stopGateway: (gateway: GatewayRef) => Effect.Effect<void, ComputeError>
  readonly deleteGateway: (gateway: GatewayRef) => Effect.Effect<void, ComputeError>
  readonly gatewayHealth: (gateway: GatewayRef) => Effect.Effect<GatewayHealth, ComputeError>
  readonly diagnostics: (gateway: GatewayRef) => Effect.Effect<ReadonlyArray<DiagnosticsCheck>, ComputeError>
  readonly readWorkspaceFile: (gateway: GatewayRef, path: string) => Effect.Effect<Uint8Array, ComputeError>
  readonly writeWorkspaceFile: (
    gateway: GatewayRef,
    path: string,
    content: Uint8Array
  ) => Effect.Effect<void, ComputeError>
  readonly privateEndpoint: (gateway: GatewayRef) => Effect.Effect<PrivateEndpoint, ComputeError>
  /**
   * The gateways this driver runs right now, whatever the database says: what a restarted worker
   * compares with the desired state to stop gateways of stopped or removed Agents (orphans).
   * Only live gateways are listed; a stopped or crashed one is not.
   */
  readonly liveGateways: Effect.Effect<ReadonlyArray<GatewayRef>, ComputeError>
  /** Where repository client material goes; absent when the driver cannot deliver it. */
  readonly repositoryClients?: RepositoryClients | undefined
  /** Why `repositoryClients` is absent, naming what to configure (a safe, fixed text); absent: not offered. */
  readonly repositoryClientsUnavailable?: string | undefined
}

export class ComputeDriver extends Context.Tag("@svc/core/drivers/compute/ComputeDriver")<
  ComputeDriver,
  ComputeDriverShape
>() {}
