/**
 * Who may open an Agent's native admin UI, and where its gateway is (SPEC 4.4 rule 2, 5.5.4, 5.8):
 * the shared session cookie only (keys never), the exact Agent of the host, exact Agent
 * `administer`, desired `running` with an active revision, and the Compute Driver's private
 * endpoint. Each step fails with a declared SPEC 7.1 error. An open WebSocket is held to the same
 * session, grant and Agent state (`admissionLapse`).
 */
import type { HttpServerRequest } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { ComputeDriver, type PrivateEndpoint } from "@svc/core/drivers/compute"
import { DependencyUnavailable, Forbidden, NotFound, ResourceConflict, Unauthenticated } from "@svc/core/errors"
import { type Caller, CurrentCaller, permission } from "@svc/core/iam"
import { type AgentRow, AgentsRepo } from "@svc/core/db"
import { AgentId, type RevisionId } from "@svc/core/schema"
import { Effect, Option } from "effect"
import { type AuthorizationError, authorize } from "../auth/authorize.js"
import { resolveSession } from "../auth/credentials.js"
import { readSessionCookie } from "../auth/sessionCookie.js"
import { AuthSettings } from "../auth/settings.js"
import { agentRef } from "../agents/policy.js"
import { agentNotFound } from "../agents/views.js"
import { withExportedSpan } from "@svc/core/observability"

export type AdmissionError = Unauthenticated | Forbidden | NotFound | ResourceConflict | DependencyUnavailable | AuthorizationError

export interface Admitted {
  readonly caller: Caller
  readonly namespaceId: string
  readonly agentId: AgentId
  readonly revisionId: RevisionId
  readonly endpoint: PrivateEndpoint
}

const unavailable = (message: string) => (error: unknown) =>
  Effect.zipRight(
    Effect.logWarning("native admin: a dependency is unavailable", { cause: String(error) }),
    Effect.fail(new DependencyUnavailable({ message }))
  )

/** SPEC 5.5.4 and 5.8: the shared session cookie, never a service key. */
const authenticateSharedSession = (request: HttpServerRequest.HttpServerRequest) =>
  Effect.gen(function* () {
    const settings = yield* AuthSettings
    if (request.headers["x-api-key"] !== undefined) {
      return yield* new Unauthenticated({ message: "Keys cannot open the native admin UI." })
    }
    const token = yield* readSessionCookie(request, settings.cookieName)
    if (Option.isNone(token)) return yield* new Unauthenticated({ message: "Authentication is required." })
    const session = yield* resolveSession(token.value)
    if (Option.isNone(session)) return yield* new Unauthenticated({ message: "The session is invalid, expired or revoked." })
    return session.value
  })

/**
 * A cookie is sent to every Agent host of the shared domain (they are same-site), so a page on
 * one Agent host could drive another with the administrator's cookie: WebSocket handshakes and
 * unsafe methods must come from this very host's origin.
 */
const checkOrigin = (request: HttpServerRequest.HttpServerRequest, upgrade: boolean) =>
  Effect.gen(function* () {
    const settings = yield* AuthSettings
    const safe = ["GET", "HEAD", "OPTIONS"].includes(request.method) && !upgrade
    if (safe) return
    const own = `${new URL(settings.trustedOrigin).protocol}//${String(request.headers["host"]).toLowerCase()}`
    const site = request.headers["sec-fetch-site"]
    if (request.headers["origin"] !== own || (site !== undefined && site !== "same-origin")) {
      return yield* new Forbidden({ message: "The request's Origin is not this Agent host." })
    }
  })

/** The Agent in its live Namespace, read from storage (at admission and at every re-check). */
const liveAgent = (agentId: AgentId) => Effect.flatMap(AgentsRepo, (agents) => agents.findLiveById(agentId)).pipe(Effect.provide(AgentsRepo.Default))

/** The Agent a host label names: `<label>` is the Agent ID without its `agt_` prefix. */
const agentOfLabel = (label: string) =>
  Effect.gen(function* () {
    const agentId = `${AgentId.prefix}_${label}`
    if (!AgentId.isValid(agentId)) return yield* agentNotFound()
    const row = yield* liveAgent(agentId)
    return Option.isNone(row) ? yield* agentNotFound() : row.value
  })

/**
 * The revision whose gateway native admin reaches (SPEC 4.4 rule 2): the Agent is not deleting,
 * is desired `running` and has an active revision. Admission and every re-check of an open
 * socket ask exactly this.
 */
const servedRevision = (agent: AgentRow): Option.Option<RevisionId> =>
  agent.status === "active" && agent.desired_runtime_state === "running" ? Option.fromNullable(agent.active_revision_id) : Option.none()

export const admitNativeAdmin = (
  request: HttpServerRequest.HttpServerRequest,
  label: string,
  upgrade: boolean
): Effect.Effect<Admitted, AdmissionError, SqlClient.SqlClient | AuthSettings | ComputeDriver> =>
  Effect.gen(function* () {
    const caller = yield* authenticateSharedSession(request)
    yield* checkOrigin(request, upgrade)
    const agent = yield* agentOfLabel(label)
    yield* authorize(permission("agent", "administer"), agentRef(agent.namespace_id, agent.id)).pipe(
      Effect.provideService(CurrentCaller, caller)
    )
    const revision = servedRevision(agent)
    if (Option.isNone(revision)) {
      return yield* new ResourceConflict({ message: "The Agent is not running an active revision." })
    }
    const revisionId = revision.value
    const compute = yield* ComputeDriver
    const endpoint = yield* compute.privateEndpoint({ namespaceId: agent.namespace_id, agentId: agent.id, revisionId })
      .pipe(Effect.catchAll(unavailable("The Agent's gateway is not reachable.")))
    return { caller, namespaceId: agent.namespace_id, agentId: agent.id, revisionId, endpoint }
  }).pipe(
    Effect.catchTag("SqlError", unavailable("Authentication is unavailable; retry later.")),
    withExportedSpan("NativeAdmin.admit")
  )

/**
 * Why an open Control UI WebSocket is closed (logged and audited; never a credential): `agent`
 * when the Agent no longer serves the admitted revision (stopped, deleting, deleted, or another
 * revision made active).
 */
export type Lapse = "session" | "grant" | "agent" | "unavailable"

/**
 * What keeps an admitted WebSocket from staying open now, if anything: its session read again
 * from storage (sign-out, a disabled or revoked account, expiry), exact Agent `administer`, and
 * the Agent still serving the very revision admitted (its endpoint is not looked up again: a
 * gateway that goes away ends its own socket). A check that cannot be made (a database failure,
 * a defect) is a lapse too: fails closed.
 */
export const admissionLapse = (
  request: HttpServerRequest.HttpServerRequest,
  admitted: Admitted
): Effect.Effect<Option.Option<Lapse>, never, SqlClient.SqlClient | AuthSettings> =>
  Effect.gen(function* () {
    const caller = yield* authenticateSharedSession(request)
    yield* authorize(permission("agent", "administer"), agentRef(admitted.namespaceId, admitted.agentId)).pipe(
      Effect.provideService(CurrentCaller, caller)
    )
    const served = Option.flatMap(yield* liveAgent(admitted.agentId), servedRevision)
    return Option.contains(served, admitted.revisionId) ? Option.none<Lapse>() : Option.some<Lapse>("agent")
  }).pipe(
    Effect.catchAll((error) => Effect.succeedSome<Lapse>(
      error._tag === "Unauthenticated" ? "session" : error._tag === "Forbidden" || error._tag === "NotFound" ? "grant" : "unavailable"
    )),
    Effect.catchAllDefect(() => Effect.succeedSome<Lapse>("unavailable")),
    withExportedSpan("NativeAdmin.recheck")
  )
