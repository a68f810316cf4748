/**
 * Identifiers from the URL, checked against the contract's own ID schemas: a malformed one is
 * "not found" on screen instead of a request the client would refuse to encode.
 */
import { AgentId, ConfigurationId, NamespaceId, RevisionId } from "@svc/core/schema"

export type { AgentId, ConfigurationId, NamespaceId, RevisionId }

export const isNamespaceId = NamespaceId.isValid
export const isAgentId = AgentId.isValid
export const isRevisionId = RevisionId.isValid
export const isConfigurationId = ConfigurationId.isValid
