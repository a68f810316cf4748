/** The Installation, read-only (SPEC 2.2): its ID, capabilities and host diagnostics. */
import { useInstallation } from "../../api/installation.js"
import { StatusBadge } from "../../components/StatusBadge.js"
import { QueryView } from "../../components/States.js"
import "./resources.css"

export const InstallationPage = () => {
  const installation = useInstallation()
  return (
    <section>
      <h1>Installation</h1>
      <QueryView query={installation} what="the Installation">
        {(data) => (
          <>
            <dl className="fields card">
              <dt>ID</dt><dd className="mono">{data.id ?? "not bootstrapped"}</dd>
              <dt>Execution modes</dt><dd data-field="execution-modes">{data.capabilities.agentProvisioning.executionModes.join(", ")}</dd>
              <dt>Native workers</dt><dd>{data.capabilities.nativeWorkers === undefined ? "no" : "yes"}</dd>
              <dt>Plugin policies</dt>
              <dd>
                {data.capabilities.pluginPolicies === undefined ? "no Plugin Driver selected" : (
                  <code>{JSON.stringify(data.capabilities.pluginPolicies)}</code>
                )}
              </dd>
            </dl>
            {data.diagnostics !== undefined && data.diagnostics.length > 0 && (
              <>
                <h2>Diagnostics</h2>
                <table className="list">
                  <thead><tr><th>Check</th><th>Status</th><th>Message</th></tr></thead>
                  <tbody>
                    {data.diagnostics.map((check) => (
                      <tr key={check.name} data-check={check.name}>
                        <td className="mono">{check.name}</td>
                        <td><StatusBadge status={check.status} /></td>
                        <td>{check.message}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </>
            )}
          </>
        )}
      </QueryView>
    </section>
  )
}
