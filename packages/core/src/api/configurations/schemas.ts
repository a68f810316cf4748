/**
 * Request and response bodies of the Configurations API (SPEC 2.8, 4.3). A Configuration holds a
 * native runtime configuration document (`values`) and the Secrets delivered beside it as
 * environment variables (`secretBindings`); model authentication is not a binding (`harnessAuth`).
 */
import {
  AgentFieldRules,
  BoundedInt,
  ConfigurationId,
  detailMessage,
  EnvironmentRecord,
  JsonObject,
  JsonValue,
  DETAIL_SEPARATOR,
  Limits,
  NamespaceId,
  OneOf,
  refusedGatewayValues,
  RequestBody,
  Timestamp
} from "../../schema/index.js"
import { Schema } from "effect"

const strict = { parseOptions: { onExcessProperty: "error", errors: "all" } } as const

/** The Secret a binding delivers: the same rule as an Agent's harness authentication source. */
export const BindingSource = AgentFieldRules.SecretSource

export const SecretBinding = Schema.Struct({
  source: BindingSource,
  delivery: Schema.optionalWith(
    Schema.Struct({ type: OneOf("env") }).annotations({ ...strict, identifier: "SecretBindingDelivery" }),
    { exact: true }
  )
}).annotations({ ...strict, identifier: "SecretBinding" })
export type SecretBinding = typeof SecretBinding.Type

export const SecretBindings = EnvironmentRecord(SecretBinding).pipe(
  Schema.filter((bindings) => Object.keys(bindings).length <= Limits.configurationSecretBindings, {
    message: detailMessage("TOO_LONG", `at most ${Limits.configurationSecretBindings} bindings`),
    jsonSchema: { maxProperties: Limits.configurationSecretBindings }
  })
).annotations({ identifier: "SecretBindings", description: "Destination environment variable name to the Secret delivered there" })
export type SecretBindings = typeof SecretBindings.Type

/**
 * `values`: a JSON-safe document that names no host path and sets no reserved variable
 * (`refusedGatewayValues`, docs/decisions/gateway-confinement.md): each such key is a 400
 * `INVALID_VALUE` with its pointer.
 */
export const ConfigurationValues = JsonObject.pipe(
  Schema.filter((values) =>
    refusedGatewayValues(values).map(({ path, reason }) => ({ path, message: `INVALID_VALUE${DETAIL_SEPARATOR}${reason}` }))
  )
).annotations({ description: "A native runtime configuration document: JSON-safe, naming no host path and setting no reserved variable" })

export const CreateConfiguration = RequestBody({
  kind: OneOf("agent"),
  values: ConfigurationValues,
  secretBindings: Schema.optionalWith(SecretBindings, { exact: true })
}).annotations({ identifier: "CreateConfigurationRequest" })

export const UpdateConfiguration = RequestBody({
  values: ConfigurationValues,
  secretBindings: Schema.optionalWith(SecretBindings, { exact: true })
}).annotations({ identifier: "UpdateConfigurationRequest" })

/** SPEC 2.8: an integer 1-9007199254740991, one at creation, each PATCH adds one. */
export const ConfigurationGeneration = BoundedInt(1, Limits.configurationGeneration)
  .annotations({ description: "1-9007199254740991; each PATCH adds one" })

export const Configuration = Schema.Struct({
  id: ConfigurationId,
  namespaceId: NamespaceId,
  kind: Schema.Literal("agent"),
  generation: ConfigurationGeneration,
  values: Schema.Record({ key: Schema.String, value: JsonValue }),
  secretBindings: Schema.Record({ key: Schema.String, value: SecretBinding }),
  createdAt: Timestamp,
  updatedAt: Timestamp
}).annotations({ identifier: "Configuration" })
export type Configuration = typeof Configuration.Type
