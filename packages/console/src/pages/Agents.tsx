/** The Agents of the Namespace in the URL. */
import { Link, useParams } from "react-router"
import { useAgents } from "../api/agents.js"
import { isNamespaceId } from "../api/ids.js"
import { useNamespacePermissions } from "../api/permissions.js"
import { StatusBadge } from "../components/StatusBadge.js"
import { Empty, NotFound, QueryView } from "../components/States.js"

const AgentList = ({ ns }: { ns: string }) => {
  const agents = useAgents(ns)
  const can = useNamespacePermissions(ns)
  return (
    <section>
      <h1>Agents</h1>
      {can("agent:create") && (
        <div className="actions">
          <Link className="button" to={`/ns/${ns}/agents/new`}>New Agent</Link>
          {can("secret:create") && <Link to={`/ns/${ns}/secrets/new`}>New Secret</Link>}
          {can("configuration:create") && <Link to={`/ns/${ns}/configurations/new`}>New Configuration</Link>}
        </div>
      )}
      <QueryView query={agents} what="the Agents of this Namespace">
        {(list) => list.length === 0 ? <Empty><p>No Agents in this Namespace yet.</p></Empty> : (
          <table className="list">
            <thead><tr><th>Name</th><th>Status</th><th>Runtime</th><th>Mode</th><th>Active revision</th></tr></thead>
            <tbody>
              {list.map((agent) => (
                <tr key={agent.id} data-agent={agent.id}>
                  <td><Link to={`/ns/${ns}/agents/${agent.id}`}>{agent.name}</Link></td>
                  <td><StatusBadge status={agent.status} /></td>
                  <td><StatusBadge status={agent.desiredRuntimeState} /></td>
                  <td>{agent.executionMode}</td>
                  <td className="mono">{agent.activeRevisionId ?? "none"}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </QueryView>
    </section>
  )
}

export const AgentsPage = () => {
  const { ns = "" } = useParams()
  // Keyed by Namespace: switching remounts, so no state of the previous one survives.
  return isNamespaceId(ns) ? <AgentList key={ns} ns={ns} /> : <NotFound what="This Namespace" />
}
