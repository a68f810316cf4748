/**
 * The HTTP pipeline every server of the service shares (DESIGN §4): request ids, SPEC envelopes
 * on every response, error mapping, JSON body checks, OpenAPI. @effect/platform only.
 */
export { withApiErrors } from "../api/apiErrors.js"
export { answerClientError, answerUnserved, createEnvelopedServer } from "./clientError.js"
export { API_TITLE, API_VERSION, documented } from "../api/documented.js"
export { type FrameworkError, handleErrors } from "./errorHandling.js"
export { bodyTextOnce } from "./bodyText.js"
export { BodyLimit, JsonBodyLive, WorkspaceWriteBodyLive } from "./jsonBody.js"
export { firstTooDeep } from "./jsonDepth.js"
export { openApiDocument, refineDocument } from "../api/openapi.js"
export { httpPipeline, type PipelineOptions } from "./pipeline.js"
export { withRequestId } from "./requestId.js"
export { makeRouteTable, type RouteTable } from "./routeTable.js"
