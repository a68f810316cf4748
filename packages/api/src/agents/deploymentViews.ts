/**
 * How revisions and deployments read back (SPEC 2.6, 2.7): a revision's frozen settings are
 * decoded like an Agent's, and a deployment's status is built from persisted state only: the
 * revision's work item and the revision row.
 */
import { type AgentRevision, type DeploymentStatus, readSavedSettings } from "@svc/core/api"
import type { RevisionRow, RevisionStatusRow, WorkStatus } from "@svc/core/db"
import type { AgentId, NamespaceId } from "@svc/core/schema"
import { WorkCodes } from "@svc/core/work"
import { Predicate } from "effect"

/**
 * A revision as stored, with its frozen settings decoded like an Agent's (SPEC 2.4): a setting
 * that no longer decodes is omitted and named in `configurationReadError`.
 */
export const toRevision = (row: RevisionRow): AgentRevision => {
  const { pluginApprovers: _stored, ...snapshot } = row.snapshot
  const { settings, unreadable } = readSavedSettings({
    harnessAuth: snapshot.harness.auth ?? null,
    plugins: snapshot.plugins.plugins ?? {},
    pluginApprovers: row.snapshot.pluginApprovers ?? null
  })
  return {
    ...snapshot,
    harness: {
      id: snapshot.harness.id,
      mode: snapshot.harness.mode,
      ...(unreadable.includes("harnessAuth") ? {} : { auth: settings.harnessAuth ?? null }),
      ...(snapshot.harness.credential === undefined ? {} : { credential: snapshot.harness.credential })
    },
    plugins: { driver: snapshot.plugins.driver, ...(settings.plugins === undefined ? {} : { plugins: settings.plugins }) },
    ...(unreadable.includes("pluginApprovers") ? {} : { pluginApprovers: settings.pluginApprovers ?? null }),
    ...(unreadable.length === 0 ? {} : { configurationReadError: { code: "SAVED_CONFIGURATION_UNREADABLE", field: unreadable[0]! } }),
    ...(row.rolled_back_from === null ? {} : { rolledBackFrom: row.rolled_back_from }),
    createdAt: row.created_at
  }
}

/** What the worker notes on a revision when starting its gateway fails (migration 0010). */
interface RuntimeFailure {
  readonly component: string
  readonly check: string
  readonly checkedAt: string
  readonly code: string
}

const RUNTIME_FAILURE_PART = /^[A-Za-z0-9._~:@-]{1,64}$/

/** Only a well-formed record is shown (SPEC 2.7's patterns); anything else is left out. */
const safeRuntimeFailure = (failure: unknown): RuntimeFailure | undefined => {
  if (!Predicate.isRecord(failure)) return undefined
  const { component, check, checkedAt, code } = failure
  if (typeof component !== "string" || typeof check !== "string" || typeof code !== "string") return undefined
  if (![component, check, code].every((part) => RUNTIME_FAILURE_PART.test(part))) return undefined
  if (typeof checkedAt !== "string" || Number.isNaN(Date.parse(checkedAt))) return undefined
  return { component, check, checkedAt: new Date(checkedAt).toISOString(), code }
}

/**
 * SPEC 2.7: a deployment that did not converge before its work item's deadline. `timeoutMs` is
 * the time it was given (deadline minus admission); `runtimeFailure` is the last failed check the
 * worker noted, when there was one. The message is fixed; native text never appears.
 */
const convergenceDeadlineExceeded = (item: { readonly deadlineAt: Date; readonly createdAt: Date }, failure: unknown): NonNullable<DeploymentStatus["error"]> => {
  const timeoutMs = item.deadlineAt.getTime() - item.createdAt.getTime()
  const runtimeFailure = safeRuntimeFailure(failure)
  const data = {
    ...(timeoutMs > 0 ? { timeoutMs } : {}),
    ...(runtimeFailure === undefined ? {} : { runtimeFailure: { ...runtimeFailure } })
  }
  return {
    code: "CONVERGENCE_DEADLINE_EXCEEDED",
    message: "The deployment did not converge before its deadline.",
    ...(Object.keys(data).length === 0 ? {} : { data })
  }
}

/** SPEC 2.7, from persisted state only: the revision's work item and the revision row. */
export const toDeployment = (namespaceId: NamespaceId, agentId: AgentId, revision: RevisionStatusRow, work: WorkStatus): DeploymentStatus => {
  const { lastAttempt, nextAttemptAt, status } = work
  const terminal = status === "succeeded" || status === "failed"
  return {
    deploymentId: revision.id,
    namespaceId,
    agentId,
    status,
    error: status !== "failed"
      ? null
      : revision.error ?? (work.item !== undefined && lastAttempt?.code === WorkCodes.DEADLINE_EXCEEDED
        ? convergenceDeadlineExceeded(work.item, revision.runtime_failure)
        : {
          code: lastAttempt?.code ?? "DEPLOYMENT_FAILED",
          message: lastAttempt?.message ?? "The deployment failed."
        }),
    progress: terminal ? null : { lastAttempt, nextAttemptAt },
    warnings: revision.warnings
  }
}
