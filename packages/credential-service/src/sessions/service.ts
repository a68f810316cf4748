/**
 * Admission, status and closure of repository sessions (SPEC 4.8), durable in PostgreSQL.
 * Admissions are serialized by a transaction-scoped advisory lock so the session limit holds
 * across replicas, and a repeated admission id is answered from the stored row.
 */
import { DependencyUnavailable, InvalidRequest, NotFound, ResourceConflict } from "@svc/core/errors"
import { RepositorySessionsRepo } from "@svc/core/db"
import type { IssuedSession, OpenSessionRequest, RepeatedSession } from "@svc/core/drivers/repo"
import { SESSION_ID } from "@svc/core/drivers/repo"
import { CredentialServiceLimits } from "@svc/core/schema"
import { Clock, Effect, Option, Redacted } from "effect"
import { CredentialSettings } from "../settings.js"
import { SessionTokens } from "../upstream/tokenCache.js"
import { admissionIdMessages, unseenAdmissionIdProblem } from "./admissionId.js"
import { digestOf, newBearer } from "./bearer.js"
import { grantProblemMessages, resolveGrant } from "./resolveGrant.js"
import { clientConfiguration, statusOf } from "./status.js"
import { exportedFn } from "@svc/core/observability"

const requestDigest = (request: OpenSessionRequest): string =>
  digestOf(JSON.stringify([
    request.durationSeconds,
    request.profile ?? null,
    request.grant.namespaceId,
    request.grant.repositoryRef,
    request.grant.profile,
    request.grant.fingerprint
  ]))

const conflict = (message: string) => new ResourceConflict({ message })

export class Sessions extends Effect.Service<Sessions>()("@svc/credential-service/Sessions", {
  effect: Effect.gen(function* () {
    const repo = yield* RepositorySessionsRepo
    const settings = yield* CredentialSettings
    const tokens = yield* SessionTokens

    /** A seen admission id: the same request gets its status, anything else is refused. */
    const repeat = (digest: string, row: Parameters<typeof statusOf>[0]) =>
      row.request_digest === digest
        ? Effect.succeed<RepeatedSession>({ session: statusOf(row) })
        : Effect.fail(conflict("X-Admission-Id was already used for a different session request"))

    const open = exportedFn("Sessions.open")(function* (admissionId: string, request: OpenSessionRequest) {
      const digest = requestDigest(request)
      const seen = yield* repo.byAdmission(admissionId)
      if (Option.isSome(seen)) return yield* repeat(digest, seen.value)
      const problem = unseenAdmissionIdProblem(admissionId, yield* Clock.currentTimeMillis)
      if (problem !== undefined) {
        return yield* new InvalidRequest({
          message: admissionIdMessages[problem],
          details: [{ code: problem === "malformed" ? "INVALID_FORMAT" : "INVALID_VALUE", path: "/headers/x-admission-id" }]
        })
      }
      const grant = resolveGrant(settings.registry, request)
      if (grant === "duration") {
        return yield* new InvalidRequest({
          message: grantProblemMessages.duration,
          details: [{ code: "INVALID_VALUE", path: "/durationSeconds" }]
        })
      }
      if (typeof grant === "string") return yield* conflict(grantProblemMessages[grant])
      const bearer = newBearer()
      const sessionId = `rs_${crypto.randomUUID()}`
      const inserted = yield* repo.withTransaction(Effect.gen(function* () {
        yield* repo.lockAdmissions
        const again = yield* repo.byAdmission(admissionId)
        if (Option.isSome(again)) return again
        if ((yield* repo.countUndisposed) >= CredentialServiceLimits.sessions) {
          return yield* conflict(`the credential service holds its limit of ${CredentialServiceLimits.sessions} sessions`)
        }
        yield* repo.insert({
          id: sessionId,
          admission_id: admissionId,
          request_digest: digest,
          bearer_digest: digestOf(bearer),
          namespace_id: request.grant.namespaceId,
          repository_ref: grant.repository.repositoryRef,
          repository_id: grant.repository.repositoryId,
          repository: grant.repository.repository,
          provider_instance_id: settings.registry.providerInstanceId,
          grant_id: grant.grantId,
          profile: grant.profile,
          push_ref_allowlist: grant.pushRefAllowlist === undefined ? null : [...grant.pushRefAllowlist],
          duration_seconds: request.durationSeconds
        })
        return Option.none()
      })).pipe(
        Effect.catchTag("SqlError", () => new DependencyUnavailable({ message: "the session store is unavailable" }))
      )
      if (Option.isSome(inserted)) return yield* repeat(digest, inserted.value)
      const row = yield* repo.byId(sessionId).pipe(Effect.flatMap(Effect.orDie))
      const issued: IssuedSession = {
        session: statusOf(row),
        client: clientConfiguration(settings.listenerUrl, row.repository),
        bearer: Redacted.make(bearer)
      }
      return issued
    })

    const find = (sessionId: string) =>
      (SESSION_ID.test(sessionId) ? repo.byId(sessionId) : Effect.succeedNone).pipe(
        Effect.flatMap(Option.match({
          onNone: () => Effect.fail(new NotFound({ message: "no such session" })),
          onSome: Effect.succeed
        }))
      )

    const status = exportedFn("Sessions.status")(function* (sessionId: string) {
      return statusOf(yield* find(sessionId))
    })

    /**
     * Stops local authority at once, then revokes the installation tokens this process holds;
     * revocation is cleanup, reported separately in `cleanup.tokens`: settled only once every
     * token minted for the session, by whichever replica, is revoked or past its expiry.
     */
    const close = exportedFn("Sessions.close")(function* (sessionId: string) {
      const row = yield* find(sessionId)
      yield* repo.close(row.id)
      yield* tokens.revokeFor(row.id)
      yield* repo.settleTokens(row.id)
      return statusOf(yield* find(sessionId))
    })

    return { open, status, close }
  })
}) {}
