import type { ResourceType } from "./permissions.js"

/**
 * The exact resource a decision is about. The Installation is the singleton; everything else is
 * a Namespace or lives in one.
 */
export type ResourceRef =
  | { readonly kind: "installation" }
  | { readonly kind: "namespace"; readonly id: string }
  | { readonly kind: Exclude<ResourceType, "installation" | "namespace">; readonly id: string; readonly namespaceId: string }

export const Installation: ResourceRef = { kind: "installation" }

export const namespaceOf = (resource: ResourceRef): string | null =>
  resource.kind === "installation" ? null : resource.kind === "namespace" ? resource.id : resource.namespaceId

/** The binding resource id of the Installation (there is one). */
export const INSTALLATION_RESOURCE_ID = "installation"
