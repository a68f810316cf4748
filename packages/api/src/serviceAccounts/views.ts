/** The public view of an account row: readiness metadata only (SPEC 2.11). */
import type { ServiceAccount } from "@svc/core/api"
import type { ServiceAccountRow } from "@svc/core/db"

const readiness = (row: ServiceAccountRow, now: Date): ServiceAccount["credential"] => {
  if (row.credential_kind === null) return null
  // SPEC 2.11: `oauth_access_token` is representable but cannot be deployed or refreshed.
  const ready = row.credential_kind === "api_key" ||
    (row.credential_kind === "access_token" && (row.credential_expires_at === null || row.credential_expires_at > now))
  return {
    kind: row.credential_kind,
    ready: ready && row.state === "ready",
    ...(row.credential_issued_at === null ? {} : { issuedAt: row.credential_issued_at }),
    ...(row.credential_expires_at === null ? {} : { expiresAt: row.credential_expires_at })
  }
}

export const toServiceAccount = (row: ServiceAccountRow, now: Date = new Date()): ServiceAccount => ({
  id: row.id,
  namespaceId: row.namespace_id,
  name: row.name,
  managed: row.backend_id !== null,
  state: row.state,
  credential: readiness(row, now),
  createdAt: row.created_at
})
