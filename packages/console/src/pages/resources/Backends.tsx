/** The configured Backends, read-only (SPEC 2.15, 4.2): id and type only, never settings. */
import { useBackendList } from "../../api/resources/admin.js"
import { Empty, QueryView } from "../../components/States.js"
import "./resources.css"

export const BackendsPage = () => {
  const backends = useBackendList()
  return (
    <section>
      <h1>Backends</h1>
      <QueryView query={backends} what="the Backends">
        {(list) => list.length === 0 ? <Empty><p>No Backends are configured for this Installation.</p></Empty> : (
          <table className="list">
            <thead><tr><th>ID</th><th>Type</th></tr></thead>
            <tbody>
              {list.map((backend) => (
                <tr key={backend.id} data-backend={backend.id}><td className="mono">{backend.id}</td><td>{backend.type}</td></tr>
              ))}
            </tbody>
          </table>
        )}
      </QueryView>
    </section>
  )
}
