/**
 * Request and response bodies of the Presets API (DESIGN §7). The template's own rules are in
 * `@svc/core/presets`.
 */
import { PresetTemplate } from "../../presets/template.js"
import { detailMessage, NamespaceId, PresetId, RequestBody, ResourceName, Timestamp } from "../../schema/index.js"
import { Schema } from "effect"

export const CreatePreset = RequestBody({ name: ResourceName, template: PresetTemplate })
  .annotations({ identifier: "CreatePresetRequest" })

/** A new name, a whole new template, or both; at least one. */
export const UpdatePreset = RequestBody({
  name: Schema.optional(ResourceName),
  template: Schema.optional(PresetTemplate)
}).pipe(
  Schema.filter((body) => body.name !== undefined || body.template !== undefined, {
    message: detailMessage("INVALID_VALUE", "give name, template or both")
  })
).annotations({ identifier: "UpdatePresetRequest" })

/**
 * A stored template as it is returned: the admitted shape without re-running admission, so a
 * response can never fail to encode.
 */
const StoredTemplate = Schema.encodedSchema(PresetTemplate).annotations({ identifier: "StoredPresetTemplate" })

export const Preset = Schema.Struct({
  id: PresetId,
  namespaceId: NamespaceId,
  name: Schema.String,
  template: StoredTemplate,
  createdAt: Timestamp,
  updatedAt: Timestamp
}).annotations({ identifier: "Preset" })
export type Preset = typeof Preset.Type
