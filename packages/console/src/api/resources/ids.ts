/** Identifiers of the resource pages, checked against the contract's own ID schemas. */
import {
  BindingId,
  ConfigurationId,
  CredentialSourceId,
  PresetId,
  RoleId,
  SecretId,
  ServiceAccountId,
  ServicePrincipalId
} from "@svc/core/schema"

export type { BindingId, CredentialSourceId, PresetId, RoleId, SecretId, ServiceAccountId, ServicePrincipalId }

export const isConfigurationId = ConfigurationId.isValid
export const isPresetId = PresetId.isValid
export const isServiceAccountId = ServiceAccountId.isValid
export const isCredentialSourceId = CredentialSourceId.isValid
