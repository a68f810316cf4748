/**
 * The rules of the Agent fields (SPEC 2.4, 2.5, 2.9), written once over how each checked string
 * is admitted. The Agent create and update bodies use them with `exactly` (every string as SPEC
 * says, `@svc/core/api` agents/fields.ts); Preset templates (DESIGN §7) use them with a rule that
 * lets a `{{ vars.x }}` reference stand in for a string until it is rendered
 * (presets/template.ts). Discriminators (`method`, `kind`) and object keys are never templated:
 * they choose the shape that admission checks.
 */
import { Schema, SchemaAST } from "effect"
import { detailMessage, type DetailCode } from "./detailCodes.js"
import { CredentialSourceId, NamespaceId, SecretId, ServiceAccountId } from "./ids.js"
import { LONE_SURROGATE } from "./json.js"
import { Limits } from "./limits.js"
import { BoundedString, maxChars, OneOf, PatternString, RequestBody, ResourceName, wellFormedText } from "./strings.js"

/**
 * How each checked string of the fields is admitted. Typed as the checked value: a templated
 * string is only ever read by rendering, which checks the rendered value with `exactly`.
 */
export type StringRule = <A extends string, I extends string>(checked: Schema.Schema<A, I>) => Schema.Schema<A, I>

/** Every string as SPEC says. */
export const exactly: StringRule = (checked) => checked

export type FixedValues = "checked" | "literal"

export interface FieldRuleOptions<F extends FixedValues> {
  /** How each checked string is admitted. */
  readonly text: StringRule
  /**
   * Whether the composite fields carry their OpenAPI component names (`HarnessAuth`,
   * `ChannelApprover`, ...). The request bodies do; a Preset template shows its settings inline.
   */
  readonly named: boolean
  /**
   * How the fixed values `kind` and `method` are checked. `checked`: a wrong one is INVALID_VALUE
   * at its pointer (Agent bodies, SPEC 7.3). `literal`: plain literals (INVALID_TYPE), because a
   * Preset's stored form is `Schema.encodedSchema` of its template, which drops refinements and
   * transformations and would no longer show the allowed values in the OpenAPI document.
   */
  readonly fixedValues: F
  /**
   * The detail code of NUL in an initial workspace file. Agent bodies say INVALID_VALUE; Preset
   * admission and rendering have said INVALID_FORMAT since Presets shipped (their API tests pin
   * it). Either way the file is refused at the same pointer.
   */
  readonly nulInFile: DetailCode
}

/**
 * An opaque identifier chosen elsewhere (a chat user, a Driver's tool): `min`-`max` characters
 * without spaces, control characters or unpaired surrogates.
 */
export const OpaqueToken = (min: number, max: number) =>
  BoundedString(min, max).pipe(
    Schema.filter((s) => !/[\s\p{Cc}]/u.test(s) && !LONE_SURROGATE.test(s), {
      message: detailMessage("INVALID_FORMAT", "must not contain spaces, control characters or unpaired surrogates")
    })
  )

const HarnessMethods = ["api_key", "direct_token", "provider_service_account", "credential_source", "runtime"] as const

/**
 * Checks `method` alone first. A union keyed by a literal reports an unknown key value as a type
 * mismatch (INVALID_TYPE) on a schema it builds on the fly, which no annotation reaches; this
 * probe reports it as INVALID_VALUE (or REQUIRED) at `/method`, and lets every other field
 * through for the variant of that method to judge (REQUIRED / UNKNOWN_FIELD at their pointers).
 */
const HarnessMethodProbe = Schema.Struct(
  { method: OneOf(...HarnessMethods) },
  Schema.Record({ key: Schema.String, value: Schema.Unknown })
)

/** SPEC 2.4: a repository reference or profile name. */
const RepositoryName = (max: number) => PatternString(/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/, max)

/** The Agent field rules with strings admitted by `options.text`. */
export const agentFieldRules = <F extends FixedValues>({ fixedValues, named, nulInFile, text }: FieldRuleOptions<F>) => {
  /** The schema for `fixedValues`, typed by it (TypeScript cannot narrow `F` from the comparison). */
  const fixed = <C, L>(checked: () => C, literal: () => L) =>
    (fixedValues === "checked" ? checked() : literal()) as F extends "checked" ? C : L
  const name = <S extends Schema.Schema.Any>(schema: S, identifier: string): S =>
    (named ? schema.annotations({ identifier }) : schema) as S

  const ExecutionMode = text(OneOf("embedded", "dedicated"))

  /**
   * A Backend ID, or null for none. Backend IDs are chosen by the operator in the Installation
   * configuration, which accepts any 1-200 characters without leading or trailing whitespace or
   * control characters; the request accepts exactly those (empty: INVALID_VALUE, longer:
   * TOO_LONG, otherwise malformed: INVALID_FORMAT, SPEC 7.3), so every configured Backend is
   * addressable and a well-formed but unknown ID is a 404, not a 400.
   */
  const BackendId = Schema.NullOr(text(ResourceName))

  /** SPEC 2.4 / 2.5: a same-Namespace Secret, `{kind: secret, namespaceId, id}`. */
  const SecretSource = name(
    RequestBody({
      kind: fixed(() => OneOf("secret"), () => Schema.Literal("secret")),
      namespaceId: text(NamespaceId),
      id: text(SecretId)
    }),
    "SecretBindingSource"
  )

  const HarnessAuthVariants = Schema.Union(
    RequestBody({ method: Schema.Literal("api_key"), source: SecretSource }),
    RequestBody({ method: Schema.Literal("direct_token"), source: SecretSource }),
    RequestBody({ method: Schema.Literal("provider_service_account"), serviceAccountId: text(ServiceAccountId) }),
    RequestBody({ method: Schema.Literal("credential_source"), sourceId: text(CredentialSourceId) }),
    RequestBody({ method: Schema.Literal("runtime") })
  )

  /**
   * One of the five bindings of SPEC 2.5, told apart by `method`. The JSON Schema (OpenAPI) is
   * that of the variants: the surrogate annotation stands in for the probe in front of them.
   */
  const HarnessAuth = name(
    fixed(
      () =>
        Schema.compose(HarnessMethodProbe, HarnessAuthVariants, { strict: false }).annotations({
          [SchemaAST.SurrogateAnnotationId]: HarnessAuthVariants.ast
        }),
      () => HarnessAuthVariants
    ),
    "HarnessAuth"
  )

  const ChannelApprover = name(
    RequestBody({
      channel: text(PatternString(/^[a-z][a-z0-9_-]*$/, Limits.pluginApproverChannel.max)),
      id: text(OpaqueToken(Limits.pluginApproverId.min, Limits.pluginApproverId.max))
    }),
    "ChannelApprover"
  )

  const PluginApprovers = Schema.Array(ChannelApprover).pipe(
    Schema.maxItems(Limits.pluginApprovers, {
      message: detailMessage("TOO_LONG", `at most ${Limits.pluginApprovers} approvers`)
    })
  )

  const RepositoryRef = text(RepositoryName(Limits.repositoryReference.max))
  const RepositoryProfile = text(RepositoryName(Limits.repositoryProfile.max))

  const RepositoryBinding = RequestBody({
    repositoryRef: RepositoryRef,
    profile: Schema.optionalWith(RepositoryProfile, { exact: true })
  })

  /** Up to 16 bindings whose references are unique (a repeat: INVALID_VALUE at its reference). */
  const RepositoryList = Schema.Array(RepositoryBinding).pipe(
    Schema.maxItems(Limits.repositoryBindingsPerAgent, {
      message: detailMessage("TOO_LONG", `at most ${Limits.repositoryBindingsPerAgent} repositories`)
    }),
    Schema.filter((bindings) =>
      bindings.flatMap((binding, index) =>
        bindings.findIndex((other) => other.repositoryRef === binding.repositoryRef) < index
          ? [{ path: [index, "repositoryRef"], message: detailMessage("INVALID_VALUE", "repeats an earlier reference")() }]
          : []
      )
    )
  )

  const RepositoryAccess = name(
    RequestBody({ defaultProfile: RepositoryProfile, repositories: RepositoryList }),
    "RepositoryAccess"
  )

  const InitialFileContent = text(
    Schema.String.pipe(
      maxChars(Limits.initialWorkspaceFileChars),
      Schema.filter((s) => !s.includes("\u0000"), { message: detailMessage(nulInFile, "must be Unicode text without NUL") }),
      wellFormedText
    )
  )

  const InitialWorkspaceFiles = name(
    RequestBody({
      "AGENTS.md": Schema.optionalWith(InitialFileContent, { exact: true }),
      "SOUL.md": Schema.optionalWith(InitialFileContent, { exact: true }),
      "IDENTITY.md": Schema.optionalWith(InitialFileContent, { exact: true }),
      "USER.md": Schema.optionalWith(InitialFileContent, { exact: true })
    }),
    "InitialWorkspaceFiles"
  )

  return {
    ExecutionMode,
    BackendId,
    SecretSource,
    HarnessAuth,
    ChannelApprover,
    PluginApprovers,
    RepositoryRef,
    RepositoryProfile,
    RepositoryList,
    RepositoryAccess,
    InitialWorkspaceFiles
  }
}

/** The rules as Agent create and update bodies apply them: every string checked, components named. */
export const AgentFieldRules = agentFieldRules({
  text: exactly,
  named: true,
  fixedValues: "checked",
  nulInFile: "INVALID_VALUE"
})
