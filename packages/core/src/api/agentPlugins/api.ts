/**
 * The plugin catalog of the selected Plugin Driver (SPEC 4.4, DESIGN §15). Plugin selections
 * themselves are made only through Agent create and update (rule 6): these routes read.
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { ErrorWire } from "../../errors/index.js"
import { Authentication, JsonBody } from "../middleware.js"
import { Envelope, NamespaceId } from "../../schema/index.js"
import { CatalogPlugin, ListPlugins, PluginDetailsRequest, PluginList } from "./schemas.js"

const InNamespace = Schema.Struct({ namespaceId: NamespaceId })

export const AgentPluginsApi = HttpApiGroup.make("agentPlugins")
  .add(
    HttpApiEndpoint.post("list", "/namespaces/:namespaceId/agents/plugins")
      .setPath(InNamespace)
      .setPayload(ListPlugins)
      .addSuccess(Envelope(PluginList, "PluginListResponse"))
      .addError(ErrorWire.NOT_IMPLEMENTED)
      .middleware(JsonBody)
      .middleware(Authentication)
      .annotate(OpenApi.Summary, "The plugins an Agent can select, searched by q and paged by cursor (needs agent:create)")
  )
  .add(
    HttpApiEndpoint.post("details", "/namespaces/:namespaceId/agents/plugins/details")
      .setPath(InNamespace)
      .setPayload(PluginDetailsRequest)
      .addSuccess(Envelope(CatalogPlugin, "PluginDetailsResponse"))
      .addError(ErrorWire.NOT_IMPLEMENTED)
      .middleware(JsonBody)
      .middleware(Authentication)
      .annotate(OpenApi.Summary, "One plugin of the catalog (needs agent:create)")
  )
  .addError(ErrorWire.FORBIDDEN)
  .annotate(OpenApi.Title, "Agent plugins")
  .annotate(OpenApi.Description, "The curated plugin catalog of the selected Plugin Driver")
