/**
 * The Presets HTTP contract (DESIGN §7). Every endpoint is authenticated; handlers authorize
 * the exact resource.
 */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { idempotent } from "../idempotency.js"
import { ErrorWire } from "../../errors/index.js"
import { JsonBody } from "../middleware.js"
import { Envelope, ListEnvelope, NamespaceId, PresetId } from "../../schema/index.js"
import { Schema } from "effect"
import { Authentication } from "../middleware.js"
import { PageParams } from "../iam/schemas.js"
import { CreatePreset, Preset, UpdatePreset } from "./schemas.js"

const InNamespace = Schema.Struct({ namespaceId: NamespaceId })
const PresetPath = Schema.Struct({ namespaceId: NamespaceId, presetId: PresetId })

export const PresetList = Schema.Array(Preset)

export const PresetsApi = HttpApiGroup.make("presets")
  .add(
    HttpApiEndpoint.post("create", "/namespaces/:namespaceId/presets")
      .pipe(idempotent)
      .setPath(InNamespace)
      .setPayload(CreatePreset)
      .addSuccess(Envelope(Preset, "PresetResponse"), { status: 201 })
      .addError(ErrorWire.RESOURCE_CONFLICT)
      .middleware(JsonBody)
      .middleware(Authentication)
      .annotate(OpenApi.Summary, "Create a Preset (needs preset:create on the Namespace)")
  )
  .add(
    HttpApiEndpoint.get("list", "/namespaces/:namespaceId/presets")
      .setPath(InNamespace)
      .setUrlParams(PageParams)
      .addSuccess(ListEnvelope(PresetList, "PresetListResponse"))
      .middleware(Authentication)
      .annotate(OpenApi.Summary, "List a Namespace's Presets (needs namespace:read; filtered by preset:read)")
  )
  .add(
    HttpApiEndpoint.get("get", "/namespaces/:namespaceId/presets/:presetId")
      .setPath(PresetPath)
      .addSuccess(Envelope(Preset, "PresetResponse"))
      .middleware(Authentication)
      .annotate(OpenApi.Summary, "Read a Preset (needs preset:read)")
  )
  .add(
    HttpApiEndpoint.patch("update", "/namespaces/:namespaceId/presets/:presetId")
      .setPath(PresetPath)
      .setPayload(UpdatePreset)
      .addSuccess(Envelope(Preset, "PresetResponse"))
      .addError(ErrorWire.RESOURCE_CONFLICT)
      .middleware(JsonBody)
      .middleware(Authentication)
      .annotate(OpenApi.Summary, "Rename a Preset or replace its whole template (needs preset:update)")
  )
  .add(
    HttpApiEndpoint.del("delete", "/namespaces/:namespaceId/presets/:presetId")
      .setPath(PresetPath)
      .addSuccess(HttpApiSchema.NoContent)
      .middleware(Authentication)
      .annotate(OpenApi.Summary, "Delete a Preset (needs preset:delete)")
  )
  .addError(ErrorWire.FORBIDDEN)
  .annotate(OpenApi.Title, "Presets")
  .annotate(OpenApi.Description, "Reusable templates of Agent launch settings with typed {{ vars.<name> }} variables")
