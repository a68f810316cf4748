/** The configured Backends, read-only (SPEC 2.15, 4.2): id and type only, never settings. */
import { useBackends } from "../../api/installation.js"
import { ResourceTable } from "../../components/resources/ResourceTable.js"
import "./resources.css"

export const BackendsPage = () => {
  const backends = useBackends()
  return (
    <section>
      <h1>Backends</h1>
      <ResourceTable
        query={backends}
        what="the Backends"
        empty="No Backends are configured for this Installation."
        headers={["ID", "Type"]}
        marker="backend"
        cells={(backend) => <><td className="mono">{backend.id}</td><td>{backend.type}</td></>}
      />
    </section>
  )
}
