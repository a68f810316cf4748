/** Identifiers of the resource pages, checked against the contract's own ID schemas. */
import { BindingId, ConfigurationId, PresetId, RoleId, SecretId, ServicePrincipalId } from "@svc/core/schema"

export type { BindingId, PresetId, RoleId, SecretId, ServicePrincipalId }

export const isConfigurationId = ConfigurationId.isValid
export const isPresetId = PresetId.isValid
