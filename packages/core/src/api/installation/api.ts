/**
 * `GET /installation` and `GET /backends` (SPEC 2.2, 2.15, 4.2): what the Installation
 * configuration selected, never its settings or credentials; and the development-only
 * `POST /installation/bootstrap`.
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { ErrorWire } from "../../errors/index.js"
import { Envelope, InstallationId } from "../../schema/index.js"
import { Schema } from "effect"
import { Authentication } from "../middleware.js"
import { DevelopmentOnly } from "../developmentOnly.js"

export const OfferedExecutionMode = Schema.Literal("embedded", "dedicated")

export const PluginPolicies = Schema.Struct({
  /** Reviewer values supported at each scope; empty: explicit reviewer selection unsupported there. */
  reviewers: Schema.Struct({ defaults: Schema.Array(Schema.String), tool: Schema.Array(Schema.String) }),
  /** Whether approvers can be saved at each level. */
  approvers: Schema.Struct({ agentDefault: Schema.Boolean, pluginOverride: Schema.Boolean, toolOverride: Schema.Boolean }),
  /** The approval modes the Driver can apply (SPEC 2.9); others are refused at admission. */
  approvalModes: Schema.optional(Schema.Array(Schema.String))
}).annotations({ identifier: "PluginPolicies" })

export const Capabilities = Schema.Struct({
  agentProvisioning: Schema.Struct({
    executionModes: Schema.Array(OfferedExecutionMode).pipe(Schema.minItems(1), Schema.maxItems(2))
  }),
  nativeWorkers: Schema.optional(Schema.Struct({})),
  pluginPolicies: Schema.optional(PluginPolicies)
}).annotations({ identifier: "InstallationCapabilities" })
export type Capabilities = typeof Capabilities.Type

/** One host fact an administrator should know (SPEC 8: at most 32 checks per response). */
export const InstallationCheck = Schema.Struct({
  name: Schema.String,
  status: Schema.Literal("pass", "warn", "fail"),
  message: Schema.String
}).annotations({ identifier: "InstallationCheck" })

export const Installation = Schema.Struct({
  /** The Installation's id, once it has been bootstrapped. */
  id: Schema.optional(InstallationId),
  capabilities: Capabilities,
  /**
   * Diagnostics of this host (an Installation field SPEC 2.2 leaves open): with the `local`
   * Compute Driver, `gateway.confinement` says how Agent gateways are confined, and warns when
   * they share the service's user (docs/decisions/gateway-confinement.md).
   */
  diagnostics: Schema.optional(Schema.Array(InstallationCheck).pipe(Schema.maxItems(32)))
}).annotations({ identifier: "Installation" })

export const BackendItem = Schema.Struct({
  id: Schema.String,
  type: Schema.Literal("model_accounts", "code_host", "sandbox_gateway")
}).annotations({ identifier: "Backend" })

export const InstallationApi = HttpApiGroup.make("installation")
  .add(
    HttpApiEndpoint.get("get", "/installation")
      .addSuccess(Envelope(Installation, "InstallationResponse"))
      .middleware(Authentication)
      .annotate(OpenApi.Summary, "The Installation and its capabilities (needs installation:read)")
  )
  .add(
    HttpApiEndpoint.get("backends", "/backends")
      .addSuccess(Envelope(Schema.Array(BackendItem), "BackendListResponse"))
      .middleware(Authentication)
      .annotate(OpenApi.Summary, "The configured Backends, id and type only (needs installation:administer)")
  )
  .add(
    HttpApiEndpoint.post("bootstrap", "/installation/bootstrap")
      .middleware(Authentication)
      .addError(ErrorWire.INSTALLATION_EXISTS)
      .annotate(DevelopmentOnly, true)
      .annotate(OpenApi.Summary, "Bootstrap the Installation (development only; needs a human administrator's session)")
      .annotate(
        OpenApi.Description,
        "SPEC 4.2 and 5.6: the Installation is created once, by the initializer that runs after migration and before the API " +
          "and worker start (`svc bootstrap`, `npm start`). By the time a caller can authenticate it exists, so a human " +
          "administrator gets 409 INSTALLATION_EXISTS; a service key gets 401 (SPEC 5.5.4). Not served in production (404)."
      )
  )
  .addError(ErrorWire.FORBIDDEN)
  .annotate(OpenApi.Title, "Installation")
  .annotate(OpenApi.Description, "The singleton Installation, its capabilities and its Backends")
