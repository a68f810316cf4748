/**
 * How `--wait` shows a deployment: one line with its status, the last attempt's code and
 * message, when the next attempt is due and any warnings. On a terminal the line is redrawn in
 * place; otherwise (a pipe, a CI log) a new line is printed for each change.
 */
import type { DeploymentStatus } from "@svc/core/api"
import { Effect } from "effect"

export const progressLine = (status: DeploymentStatus): string => {
  const parts = [`${status.deploymentId}  ${status.status}`]
  const attempt = status.progress?.lastAttempt
  if (attempt !== null && attempt !== undefined) parts.push(`last attempt ${attempt.code}: ${attempt.message}`)
  const next = status.progress?.nextAttemptAt
  if (next !== null && next !== undefined) parts.push(`next attempt ${next.toISOString()}`)
  if (status.error !== null) parts.push(`${status.error.code}: ${status.error.message}`)
  if (status.warnings.length > 0) parts.push(`warnings ${status.warnings.map((w) => `${w.code}(${w.pluginId})`).join(", ")}`)
  return parts.join("  ")
}

export interface ProgressView {
  readonly show: (status: DeploymentStatus) => Effect.Effect<void>
  /** Ends the redrawn line so later output starts on its own. */
  readonly finish: Effect.Effect<void>
}

const CLEAR_LINE = "\r\u001b[2K"

export const progressView = (stream: NodeJS.WriteStream, redraw: boolean): ProgressView => {
  let drawn = false
  return {
    show: (status) =>
      Effect.sync(() => {
        const line = progressLine(status)
        if (redraw) {
          stream.write(`${CLEAR_LINE}${line.slice(0, Math.max(20, (stream.columns ?? 120) - 1))}`)
          drawn = true
        } else {
          stream.write(`${line}\n`)
        }
      }),
    finish: Effect.sync(() => {
      if (drawn) stream.write("\n")
    })
  }
}
