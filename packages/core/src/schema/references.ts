import { Schema } from "effect"
import { NamespaceId, SecretId } from "./ids.js"

/** How other resources (Agent settings, Configurations, Presets) name a Secret (SPEC 2.5, 2.8). */
export const SecretRef = Schema.Struct({
  kind: Schema.Literal("secret"),
  namespaceId: NamespaceId,
  id: SecretId
}).annotations({ identifier: "SecretRef" })
export type SecretRef = typeof SecretRef.Type
