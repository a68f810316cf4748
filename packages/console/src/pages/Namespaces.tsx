/** Namespaces: list with live status, create, delete (SPEC 4.2, 3 Namespace). */
import { type FormEvent, useState } from "react"
import { Link } from "react-router"
import { useCreateNamespace, useDeleteNamespace, useNamespaces } from "../api/namespaces.js"
import { useInstallationPermissions, useNamespacePermissions } from "../api/permissions.js"
import { StatusBadge } from "../components/StatusBadge.js"
import { ActionError, Empty, QueryView } from "../components/States.js"

interface NamespaceRowProps {
  readonly namespace: { readonly id: string; readonly name: string; readonly status: string }
  readonly remove: ReturnType<typeof useDeleteNamespace>
}

const NamespaceRow = ({ namespace, remove }: NamespaceRowProps) => {
  const can = useNamespacePermissions(namespace.id)
  return (
    <tr data-namespace={namespace.id}>
      <td><Link to={`/ns/${namespace.id}/agents`}>{namespace.name}</Link></td>
      <td><StatusBadge status={namespace.status} /></td>
      <td className="mono">{namespace.id}</td>
      <td>
        {namespace.status !== "deleting" && can("namespace:delete") && (
          <button
            type="button"
            className="danger"
            disabled={remove.isPending}
            onClick={() => window.confirm(`Delete Namespace ${namespace.name}?`) && remove.mutate(namespace.id)}
          >
            Delete
          </button>
        )}
      </td>
    </tr>
  )
}

const CreateNamespace = () => {
  const create = useCreateNamespace()
  const [name, setName] = useState("")
  const submit = (event: FormEvent) => {
    event.preventDefault()
    create.mutate(name, { onSuccess: () => setName("") })
  }
  return (
    <form className="form inline" onSubmit={submit} aria-label="Create a Namespace">
      <label>Name<input name="namespace-name" required maxLength={200} value={name} onChange={(e) => setName(e.target.value)} /></label>
      <button type="submit" disabled={create.isPending}>Create Namespace</button>
      <ActionError error={create.error} />
    </form>
  )
}

export const NamespacesPage = () => {
  const namespaces = useNamespaces()
  const remove = useDeleteNamespace()
  const can = useInstallationPermissions()
  return (
    <section>
      <h1>Namespaces</h1>
      {can("namespace:create") && <CreateNamespace />}
      <ActionError error={remove.error} />
      <QueryView query={namespaces} what="Namespaces">
        {(list) => list.length === 0 ? <Empty><p>No Namespaces yet.</p></Empty> : (
          <table className="list">
            <thead><tr><th>Name</th><th>Status</th><th>ID</th><th /></tr></thead>
            <tbody>
              {list.map((namespace) => <NamespaceRow key={namespace.id} namespace={namespace} remove={remove} />)}
            </tbody>
          </table>
        )}
      </QueryView>
    </section>
  )
}
