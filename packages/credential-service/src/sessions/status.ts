import type { RepositorySessionRow } from "@svc/core/db"
import type { ClientConfiguration, SessionStatus } from "@svc/core/drivers/repo"
import type { RepositoryProfileName } from "@svc/core/config"

/** The public status of a stored session; an expired session has lost its authority. */
export const statusOf = (row: RepositorySessionRow): SessionStatus => ({
  sessionId: row.id,
  state: row.state === "active" && row.expired ? "CLOSED" : row.state,
  deadlineWallMs: row.deadline_ms,
  binding: { providerInstanceId: row.provider_instance_id, repositoryId: row.repository_id, grantId: row.grant_id },
  profile: row.profile as RepositoryProfileName,
  cleanup: { tokens: row.tokens_settled ? "settled" : "pending" }
})

export const clientConfiguration = (listenerUrl: string, repository: string): ClientConfiguration => ({
  repository,
  listenerUrl,
  gitUrl: `${listenerUrl}/${repository}.git`,
  apiUrl: `${listenerUrl}/api/v3`,
  username: "x-access-token"
})
