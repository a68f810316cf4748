/**
 * The Agent launch settings a Preset template carries (SPEC 2.4, 2.5, 2.8, 2.9; DESIGN §7) and
 * the Configuration document beside them, as Schemas built over a choice of string schema:
 * `exactly` checks every string as SPEC says (what an Agent draft holds); Preset templates wrap
 * each checked string so a `{{ vars.x }}` reference may stand in for it until it is rendered.
 * Discriminators (`method`, `kind`, `delivery.type`) and object keys are never templated: they
 * choose the shape that admission checks.
 */
import { Schema } from "effect"
import { detailMessage } from "./detailCodes.js"
import { EnvironmentName } from "./environment.js"
import { JsonObject } from "./json.js"
import { keysOf, maxEntries } from "./records.js"
import { CredentialSourceId, NamespaceId, SecretId, ServiceAccountId } from "./ids.js"
import { Limits } from "./limits.js"
import { BoundedString, OneOf, PatternString, RequestBody, ResourceName } from "./strings.js"

/** How each checked string of the settings is admitted. */
export type StringRule = (checked: Schema.Schema.AnyNoContext) => Schema.Schema<string>

/** Every string as SPEC says. */
export const exactly: StringRule = (checked) => checked as Schema.Schema<string>

/** An identifier of one kind, as a plain string (INVALID_FORMAT otherwise). */
const idOf = (id: { readonly isValid: (value: unknown) => boolean; readonly prefix: string }) =>
  Schema.String.pipe(
    Schema.filter((s) => id.isValid(s), { message: detailMessage("INVALID_FORMAT", `must be ${id.prefix}_ followed by a lowercase UUIDv4`) })
  )

const hasControlOrSpace = (s: string) => /[\u0000-\u0020\u007f-\u009f]/.test(s)

/** A plugin ID (SPEC 2.9). */
export const PluginId = PatternString(/^[A-Za-z0-9._~:@-]{1,253}$/, Limits.pluginId.max)

/** The Agent launch settings and the Configuration document, with strings admitted by `text`. */
export const launchSettings = (text: StringRule) => {
  const SecretReference = RequestBody({ kind: Schema.Literal("secret"), namespaceId: text(idOf(NamespaceId)), id: text(idOf(SecretId)) })
  const HarnessAuth = Schema.Union(
    RequestBody({ method: Schema.Literal("api_key"), source: SecretReference }),
    RequestBody({ method: Schema.Literal("direct_token"), source: SecretReference }),
    RequestBody({ method: Schema.Literal("provider_service_account"), serviceAccountId: text(idOf(ServiceAccountId)) }),
    RequestBody({ method: Schema.Literal("credential_source"), sourceId: text(idOf(CredentialSourceId)) }),
    RequestBody({ method: Schema.Literal("runtime") })
  )
  const WorkspaceFile = text(
    Schema.String.pipe(
      Schema.maxLength(Limits.initialWorkspaceFileChars, {
        message: detailMessage("TOO_LONG", `must be at most ${Limits.initialWorkspaceFileChars} characters`)
      }),
      Schema.filter((s) => !s.includes("\u0000"), { message: detailMessage("INVALID_FORMAT", "must not contain NUL") })
    )
  )
  const PluginApprover = RequestBody({
    channel: text(PatternString(/^[a-z][a-z0-9_-]*$/, Limits.pluginApproverChannel.max)),
    id: text(
      BoundedString(Limits.pluginApproverId.min, Limits.pluginApproverId.max).pipe(
        Schema.filter((s) => !hasControlOrSpace(s), { message: detailMessage("INVALID_FORMAT", "no spaces or control characters") })
      )
    )
  })
  const RepositoryName = text(PatternString(/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/, Limits.repositoryReference.max))
  const RepositoryAccess = RequestBody({
    defaultProfile: RepositoryName,
    repositories: Schema.Array(RequestBody({ repositoryRef: RepositoryName, profile: Schema.optional(RepositoryName) })).pipe(
      Schema.maxItems(Limits.repositoryBindingsPerAgent, {
        message: detailMessage("TOO_LONG", `at most ${Limits.repositoryBindingsPerAgent} repositories`)
      }),
      Schema.filter((repositories) => {
        const seen = new Set<string>()
        return repositories.flatMap((repository, index) => {
          const duplicate = seen.has(repository.repositoryRef)
          seen.add(repository.repositoryRef)
          return duplicate
            ? [{ path: [index, "repositoryRef"], message: detailMessage("INVALID_VALUE", "repository references must be unique")() }]
            : []
        })
      })
    )
  })
  const AgentLaunchSettings = RequestBody({
    executionMode: Schema.optional(text(OneOf("embedded", "dedicated"))),
    backendId: Schema.optional(Schema.NullOr(text(ResourceName))),
    harnessAuth: Schema.optional(Schema.NullOr(HarnessAuth)),
    initialWorkspaceFiles: Schema.optional(
      RequestBody({
        "AGENTS.md": Schema.optional(WorkspaceFile),
        "SOUL.md": Schema.optional(WorkspaceFile),
        "IDENTITY.md": Schema.optional(WorkspaceFile),
        "USER.md": Schema.optional(WorkspaceFile)
      })
    ),
    /** Structural rules of SPEC 2.9 belong to the Agents capability; here: an object per plugin ID. */
    plugins: Schema.optional(
      Schema.Record({ key: Schema.String, value: JsonObject }).pipe(keysOf(PluginId))
    ),
    pluginApprovers: Schema.optional(
      Schema.Array(PluginApprover).pipe(
        Schema.maxItems(Limits.pluginApprovers, { message: detailMessage("TOO_LONG", `at most ${Limits.pluginApprovers} approvers`) })
      )
    ),
    repositoryAccess: Schema.optional(RepositoryAccess)
  })
  const SecretBinding = RequestBody({
    source: SecretReference,
    delivery: Schema.optional(RequestBody({ type: Schema.Literal("env") }))
  })
  const ConfigurationDocument = RequestBody({
    values: JsonObject,
    secretBindings: Schema.optional(
      Schema.Record({ key: Schema.String, value: SecretBinding }).pipe(
        keysOf(EnvironmentName),
        maxEntries(Limits.configurationSecretBindings)
      )
    )
  })
  return { AgentLaunchSettings, ConfigurationDocument }
}

const exact = launchSettings(exactly)
/** Agent launch settings as an Agent draft holds them (every string checked). */
export const AgentLaunchSettings = exact.AgentLaunchSettings
export type AgentLaunchSettings = typeof AgentLaunchSettings.Type
/** `{values, secretBindings?}` of a Configuration (SPEC 2.8), every string checked. */
export const ConfigurationDocument = exact.ConfigurationDocument
export type ConfigurationDocument = typeof ConfigurationDocument.Type
