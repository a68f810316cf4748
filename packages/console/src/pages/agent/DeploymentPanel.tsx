/** The live status of one deployment (SPEC 2.7), through `useDeploymentStatus` only. */
import { useDeploymentStatus } from "../../api/deploymentStatus.js"
import { StatusBadge } from "../../components/StatusBadge.js"
import { QueryView } from "../../components/States.js"

const when = (timestamp: Date | null) => timestamp === null ? "none" : timestamp.toLocaleString()

export const DeploymentPanel = ({ ns, agentId, deploymentId }: { ns: string; agentId: string; deploymentId: string }) => {
  const status = useDeploymentStatus(ns, agentId, deploymentId)
  return (
    <div className="card" aria-label="Deployment status" data-deployment={deploymentId}>
      <h2>Deployment <span className="mono">{deploymentId}</span></h2>
      <QueryView query={status} what="this deployment">
        {(d) => (
          <>
            <p>Status: <StatusBadge status={d.status} /></p>
            {d.progress !== null && (
              <dl className="fields">
                <dt>Last attempt</dt>
                <dd data-field="last-attempt">
                  {d.progress.lastAttempt === null ? "none yet" : `${when(d.progress.lastAttempt.at)}: ${d.progress.lastAttempt.code} (${d.progress.lastAttempt.message})`}
                </dd>
                <dt>Next attempt</dt>
                <dd data-field="next-attempt">{when(d.progress.nextAttemptAt)}</dd>
              </dl>
            )}
            {d.error !== null && (
              <p className="action-error" role="alert" data-code={d.error.code}>
                <strong>{d.error.code}</strong>: {d.error.message}
                {d.error.data !== undefined && <code className="mono"> {JSON.stringify(d.error.data)}</code>}
              </p>
            )}
            {d.warnings.length > 0 && (
              <ul className="warnings" aria-label="Warnings">
                {d.warnings.map((w) => <li key={`${w.code}-${w.pluginId}`} data-code={w.code}>{w.code}: {w.pluginId}</li>)}
              </ul>
            )}
          </>
        )}
      </QueryView>
    </div>
  )
}
