/**
 * The Repo Driver (SPEC 4.8): repository options for a Namespace, admission of bindings into
 * frozen grants, and sessions through the credential service. `close` stops local authority
 * only; it does not promise remote revocation.
 */
import { Context, Data, type Effect, type Option, type Redacted } from "effect"
import type { RepositoryProfileName } from "../../config/installation/registry.js"
import type { ClientConfiguration, FrozenGrant, SessionStatus } from "./control.js"
import type { ControlUnavailable } from "./controlClient.js"

/** SPEC 2.14 repository option record. */
export interface RepositoryOption {
  readonly repositoryRef: string
  readonly displayName: string
  readonly allowedProfiles: ReadonlyArray<RepositoryProfileName>
  readonly description?: string
}

/** Why a binding cannot be admitted for a Namespace. */
export class RepositoryNotAdmitted extends Data.TaggedError("RepositoryNotAdmitted")<{
  readonly repositoryRef: string
  readonly reason: "not-approved" | "profile-not-allowed"
}> {}

/** The credential service refused the session request (a stale grant, a limit). */
export class SessionRefused extends Data.TaggedError("SessionRefused")<{ readonly status: number; readonly message: string }> {}

export type OpenResult =
  | {
    readonly result: "created"
    readonly session: SessionStatus
    readonly client: ClientConfiguration
    readonly bearer: Redacted.Redacted<string>
  }
  /** The admission id was seen: the session exists, its bearer was issued before. */
  | { readonly result: "recovered"; readonly session: SessionStatus }
  /** The admission id is too old to be new and the service never saw it: no session exists. */
  | { readonly result: "missing" }

export interface RepoDriverShape {
  readonly id: string
  readonly listOptions: (namespaceId: string) => ReadonlyArray<RepositoryOption>
  /**
   * The code host's descriptions of registry repositories, read through the credential service
   * (which holds the App key): one entry per reference, `undefined` when there is none.
   */
  readonly describe: (
    repositoryRefs: ReadonlyArray<string>
  ) => Effect.Effect<ReadonlyMap<string, string | undefined>, ControlUnavailable>
  readonly resolve: (
    namespaceId: string,
    binding: { readonly repositoryRef: string; readonly profile: string }
  ) => Effect.Effect<FrozenGrant, RepositoryNotAdmitted>
  readonly checkAdmissionReady: Effect.Effect<void, ControlUnavailable>
  readonly open: (
    grant: FrozenGrant,
    admissionId: string
  ) => Effect.Effect<OpenResult, ControlUnavailable | SessionRefused>
  readonly status: (sessionId: string) => Effect.Effect<Option.Option<SessionStatus>, ControlUnavailable>
  readonly close: (sessionId: string) => Effect.Effect<Option.Option<SessionStatus>, ControlUnavailable>
}

export class RepoDriver extends Context.Tag("@svc/core/RepoDriver")<RepoDriver, RepoDriverShape>() {}
