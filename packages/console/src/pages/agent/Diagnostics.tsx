/** Diagnostics of the active revision (SPEC 2.7): asked on demand, never stored. */
import { useDiagnostics } from "../../api/agents.js"
import { StatusBadge } from "../../components/StatusBadge.js"
import { ActionError } from "../../components/States.js"

export const Diagnostics = ({ ns, agentId, revisionId }: { ns: string; agentId: string; revisionId: string }) => {
  const diagnostics = useDiagnostics(ns, agentId)
  return (
    <section aria-label="Diagnostics">
      <h2>Diagnostics</h2>
      <button type="button" className="secondary" disabled={diagnostics.isPending} onClick={() => diagnostics.mutate(revisionId)}>
        {diagnostics.isPending ? "Checking…" : "Run diagnostics"}
      </button>
      <ActionError error={diagnostics.error} />
      {diagnostics.data !== undefined && (
        <table className="list">
          <thead><tr><th>Component</th><th>Check</th><th>State</th><th>Code</th></tr></thead>
          <tbody>
            {diagnostics.data.checks.map((c) => (
              <tr key={`${c.component}/${c.check}`}>
                <td>{c.component}</td><td>{c.check}</td><td><StatusBadge status={c.state} /></td><td>{c.code ?? ""}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  )
}
