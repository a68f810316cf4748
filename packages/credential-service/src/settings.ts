import type { RepositoryRegistry } from "@svc/core/config"
import { Context } from "effect"

/** What the credential service runs with, loaded once by main.ts. */
export interface CredentialServiceSettings {
  readonly registry: RepositoryRegistry
  /** The client listener's origin as clients reach it (no trailing slash). */
  readonly listenerUrl: string
}

export class CredentialSettings extends Context.Tag("@svc/credential-service/CredentialSettings")<
  CredentialSettings,
  CredentialServiceSettings
>() {}
