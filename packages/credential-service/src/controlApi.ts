import { HttpApi, HttpApiBuilder, HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { JsonBody } from "@svc/core/api"
import {
  DescribeRepositoriesRequest,
  IssuedSession,
  OpenSessionRequest,
  RepeatedSession,
  RepositoryDescriptions,
  SessionStatus
} from "@svc/core/drivers/repo"
import { DependencyUnavailable, ErrorWire } from "@svc/core/errors"
import { documented, withApiErrors } from "@svc/core/http"
import { Envelope } from "@svc/core/schema"
import { Effect, Schema } from "effect"
import { Sessions } from "./sessions/service.js"
import { RepositoryMetadata } from "./upstream/repositoryMetadata.js"

export const Capabilities = Schema.Struct({
  durableAdmissionVersion: Schema.Literal(1)
}).annotations({ identifier: "Capabilities" })

const SessionPath = Schema.Struct({ sessionId: Schema.String })

/** The private control interface (SPEC 4.8), served over a mode-0600 Unix socket. */
export const ControlApi = documented(
  withApiErrors(HttpApi.make("credential-service")).add(
    HttpApiGroup.make("control")
      .add(
        HttpApiEndpoint.get("capabilities", "/v1/capabilities")
          .addSuccess(Envelope(Capabilities, "CapabilitiesResponse"))
          .annotate(OpenApi.Summary, "What this credential service supports")
      )
      .add(
        HttpApiEndpoint.post("open", "/v1/sessions")
          .setHeaders(Schema.Struct({ "x-admission-id": Schema.String }))
          .setPayload(OpenSessionRequest)
          .addSuccess(Envelope(IssuedSession, "IssuedSessionResponse"), { status: 201 })
          .addSuccess(Envelope(RepeatedSession, "RepeatedSessionResponse"), { status: 200 })
          .addError(ErrorWire.RESOURCE_CONFLICT)
          .middleware(JsonBody)
          .annotate(OpenApi.Summary, "Admit a session for a frozen grant: 201 with the bearer once, 200 status only on repeat")
      )
      .add(
        HttpApiEndpoint.get("status", "/v1/sessions/:sessionId")
          .setPath(SessionPath)
          .addSuccess(Envelope(SessionStatus, "SessionStatusResponse"))
          .annotate(OpenApi.Summary, "A session's private status and cleanup status")
      )
      .add(
        HttpApiEndpoint.post("close", "/v1/sessions/:sessionId/close")
          .setPath(SessionPath)
          .addSuccess(Envelope(SessionStatus, "ClosedSessionResponse"))
          .annotate(OpenApi.Summary, "Stop the session's local authority now; revocation is reported as cleanup")
      )
      .add(
        HttpApiEndpoint.post("describe", "/v1/repository-descriptions")
          .setPayload(DescribeRepositoriesRequest)
          .addSuccess(Envelope(RepositoryDescriptions, "RepositoryDescriptionsResponse"))
          .addError(ErrorWire.DEPENDENCY_UNAVAILABLE)
          .middleware(JsonBody)
          .annotate(OpenApi.Summary, "The code host's descriptions of registry repositories, for the API's repository options")
      )
      .annotate(OpenApi.Description, "Private control interface of the credential service")
  )
)

export const ControlLive = HttpApiBuilder.group(ControlApi, "control", (handlers) =>
  Effect.gen(function* () {
    const sessions = yield* Sessions
    const metadata = yield* RepositoryMetadata
    return handlers
      .handle("capabilities", () => Effect.succeed({ durableAdmissionVersion: 1 } as const))
      .handle("open", ({ headers, payload }) => sessions.open(headers["x-admission-id"], payload))
      .handle("status", ({ path }) => sessions.status(path.sessionId))
      .handle("close", ({ path }) => sessions.close(path.sessionId))
      .handle("describe", ({ payload }) =>
        metadata.describe(payload.repositoryRefs).pipe(
          Effect.tapError((error) => Effect.logWarning("repository descriptions unavailable").pipe(Effect.annotateLogs({ reason: error.reason }))),
          Effect.mapError(() => new DependencyUnavailable({ message: "The code host did not answer the repository metadata read." }))
        ))
  })
)
