/**
 * The plugin catalog routes' bodies and answers (SPEC 4.4 `POST .../agents/plugins` and
 * `/plugins/details`; DESIGN §15 gives their requests: `{q?, cursor?}` and `{pluginId}`).
 */
import { Schema } from "effect"
import { detailMessage, maxChars, minChars, PluginId, RequestBody } from "../../schema/index.js"

const Link = Schema.Struct({ label: Schema.String, url: Schema.String })

export const PluginTool = Schema.Struct({ id: Schema.String, name: Schema.String, description: Schema.String })

/** One plugin (SPEC 4.4): `id`, `name`, `tools` always; the rest when the Driver knows them. */
export const CatalogPlugin = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  tools: Schema.NullOr(Schema.Array(PluginTool)),
  available: Schema.optional(Schema.Boolean),
  description: Schema.optional(Schema.String),
  logoUrl: Schema.optional(Schema.String),
  privacyPolicyUrl: Schema.optional(Schema.String),
  remoteId: Schema.optional(Schema.String),
  selectableWithoutTools: Schema.optional(Schema.Boolean),
  termsOfServiceUrl: Schema.optional(Schema.String),
  unavailableHelp: Schema.optional(Link),
  unavailableReason: Schema.optional(Schema.String),
  websiteUrl: Schema.optional(Schema.String)
}).annotations({ identifier: "CatalogPlugin" })

export const PluginList = Schema.Struct({
  plugins: Schema.Array(CatalogPlugin),
  nextCursor: Schema.NullOr(Schema.String),
  setup: Schema.optional(Schema.Struct({ message: Schema.String, links: Schema.Array(Link) }))
}).annotations({ identifier: "PluginList" })

const Query = Schema.String.pipe(
  minChars(1, "must not be empty"),
  maxChars(200),
  Schema.filter((s) => !/[\u0000-\u001f\u007f-\u009f]/.test(s), { message: detailMessage("INVALID_FORMAT", "must not contain control characters") })
)

export const ListPlugins = RequestBody({
  q: Schema.optionalWith(Query, { exact: true }),
  cursor: Schema.optionalWith(PluginId, { exact: true })
}).annotations({ identifier: "ListPluginsRequest" })

export const PluginDetailsRequest = RequestBody({ pluginId: PluginId }).annotations({ identifier: "PluginDetailsRequest" })
