/**
 * Diagnostics (SPEC 2.7, 4.4): checks gathered live from the Compute Driver and the gateway for
 * the Agent's active revision, never stored. Needs Agent `read` and `operate` and revision
 * `read`; 409 for a revision that is not active; 503 when no evidence can be gathered.
 */
import { ComputeDriver, probeModel } from "@svc/core/drivers/compute"
import { DependencyUnavailable, ResourceConflict } from "@svc/core/errors"
import { type AgentId, Limits, type NamespaceId, type RevisionId } from "@svc/core/schema"
import { Effect } from "effect"
import { Authorization } from "../auth/authorize.js"
import { toRevision } from "./deploymentViews.js"
import { AgentLookup } from "./lookup.js"
import { agentRef, revisionRef } from "./policy.js"
import { exportedFn } from "@svc/core/observability"

export interface DiagnosticCheck {
  readonly component: string
  readonly check: string
  readonly state: "succeeded" | "failed" | "unknown"
  readonly checkedAt: Date | null
  readonly code?: string
}

export class Diagnostics extends Effect.Service<Diagnostics>()("@svc/api/AgentDiagnostics", {
  effect: Effect.gen(function* () {
    const lookup = yield* AgentLookup
    const driver = yield* ComputeDriver
    const { authorize } = yield* Authorization

    const run = exportedFn("Agents.diagnostics")(function* (namespaceId: NamespaceId, agentId: AgentId, revisionId: RevisionId) {
      yield* authorize("agent:read", agentRef(namespaceId, agentId))
      yield* authorize("agent:operate", agentRef(namespaceId, agentId))
      yield* authorize("agent_revision:read", revisionRef(namespaceId, revisionId))
      const agent = yield* lookup.require(namespaceId, agentId, false)
      const revision = toRevision(yield* lookup.requireRevision(namespaceId, agentId, revisionId))
      if (agent.active_revision_id !== revisionId) {
        return yield* new ResourceConflict({ message: "Diagnostics are gathered for the Agent's active revision only." })
      }
      const ref = { namespaceId, agentId, revisionId }
      const found = yield* driver.diagnostics(ref).pipe(
        Effect.tapError((error) => Effect.logWarning("diagnostics unavailable", { agentId, error: error._tag })),
        Effect.mapError(() => new DependencyUnavailable({ message: "Diagnostics evidence is unavailable; retry later." }))
      )
      const checkedAt = new Date()
      const checks: Array<DiagnosticCheck> = found.map((c) => {
        const [component, ...rest] = c.name.split(".")
        return {
          component: component ?? "gateway",
          check: rest.join(".") || c.name,
          state: c.status === "pass" ? "succeeded" : c.status === "fail" ? "failed" : "unknown",
          checkedAt,
          ...(c.status === "pass" ? {} : { code: c.name.toUpperCase().replace(/[^A-Z0-9]+/g, "_") })
        }
      })
      // Model authentication, live: one bounded request through the gateway (not for `runtime`
      // harness auth, whose credentials the service never handles, SPEC 2.5). The binding is the
      // revision's, the one the gateway runs with, not the draft's.
      const ready = checks.some((c) => c.component === "gateway" && c.check === "ready" && c.state === "succeeded")
      if (revision.harness.auth?.method !== "runtime") {
        const probe = ready
          ? yield* driver.privateEndpoint(ref).pipe(Effect.flatMap((endpoint) => probeModel(endpoint)), Effect.option)
          : undefined
        const result = probe?._tag === "Some" ? probe.value : undefined
        checks.push({
          component: "model",
          check: "auth",
          state: result === undefined ? "unknown" : result._tag === "Succeeded" ? "succeeded" : "failed",
          checkedAt: result === undefined ? null : new Date(),
          ...(result === undefined || result._tag === "Succeeded"
            ? {}
            : { code: result._tag === "AuthenticationFailed" ? "RUNTIME_AUTHENTICATION_FAILED" : "MODEL_PROBE_FAILED" })
        })
      }
      return { revisionId, observedAt: checkedAt, checks: checks.slice(0, Limits.diagnosticsChecks) }
    })

    return { run }
  }),
  dependencies: [AgentLookup.Default, Authorization.Default]
}) {}
