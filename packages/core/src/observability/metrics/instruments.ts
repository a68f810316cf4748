/**
 * Every metric the service reports, in one place (the README's "Metrics" table lists the same).
 * Effect `Metric`s: they live in Effect's metric registry, which both the OTLP exporter and the
 * Prometheus endpoint read. Label values are bounded sets (route templates, methods, status
 * codes, work kinds and states, driver ids, failure codes), never ids or raw paths.
 */
import { Metric, MetricBoundaries } from "effect"

/** Upper bounds in seconds for request latency: 5 ms to 10 s. */
const requestBuckets = MetricBoundaries.fromIterable([0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10])

/** Upper bounds in seconds for waiting in the queue: 10 ms to 15 min. */
const waitBuckets = MetricBoundaries.fromIterable([0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 900])

/** Labels `method`, `route` (template or `unmatched`), `status`. */
export const httpRequests = Metric.counter("svc_http_requests_total", {
  description: "HTTP requests answered, by method, route template and status code",
  incremental: true
})

/** Labels `method`, `route`. */
export const httpRequestDuration = Metric.histogram(
  "svc_http_request_duration_seconds",
  requestBuckets,
  "Time from receiving an HTTP request to its response, in seconds"
)

/** Labels `kind`, `state`; sampled from the database by every worker. */
export const workItems = Metric.gauge("svc_work_items", {
  description: "Work items by kind and state (sampled from the database)"
})

/** Label `kind`; 0 when nothing of the kind is queued. */
export const workQueueOldestAge = Metric.gauge("svc_work_queue_oldest_age_seconds", {
  description: "Age in seconds of the oldest due queued work item, by kind (sampled from the database)"
})

/** Labels `kind`, `to` (`running` at a claim, then `succeeded`, `queued` for a retry, `failed`). */
export const workTransitions = Metric.counter("svc_work_transitions_total", {
  description: "Work item state changes made by this worker, by kind and new state",
  incremental: true
})

/** Label `kind`. */
export const workClaimLatency = Metric.histogram(
  "svc_work_claim_latency_seconds",
  waitBuckets,
  "Time from a work item being due to a worker claiming it, in seconds"
)

/** Label `driver`. */
export const gatewayStarts = Metric.counter("svc_gateway_starts_total", {
  description: "Agent gateway starts attempted, by Compute Driver",
  incremental: true
})

/** Labels `driver`, `code` (the ComputeFailure code). */
export const gatewayStartFailures = Metric.counter("svc_gateway_start_failures_total", {
  description: "Agent gateway starts that failed, by Compute Driver and failure code",
  incremental: true
})

/**
 * Open credential-service sessions. Declared for the catalogue; the credential service has no
 * sessions yet (SPEC 4.8 foundation only), so nothing reports it until they exist.
 */
export const credentialSessions = Metric.gauge("svc_credential_sessions", {
  description: "Open credential-service sessions (reported once the credential service has sessions)"
})
