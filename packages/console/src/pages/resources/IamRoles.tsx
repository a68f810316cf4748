/**
 * A Namespace's Roles (SPEC 4.7): the built-in ones and custom ones; custom Roles are created
 * with a name and permissions and deleted while nothing binds them. Roles are immutable.
 */
import { type FormEvent, useState } from "react"
import { useNamespacePermissions } from "../../api/permissions.js"
import { useRoles, useRoleWrites } from "../../api/resources/iam.js"
import { DeleteButton } from "../../components/resources/DeleteButton.js"
import { IamNav } from "../../components/resources/IamNav.js"
import { NamespacePage } from "../../components/NamespacePage.js"
import { Problems } from "../../components/resources/Problems.js"
import { ResourceTable } from "../../components/resources/ResourceTable.js"
import { ActionError } from "../../components/States.js"
import "./resources.css"

const CreateRole = ({ create }: { create: ReturnType<typeof useRoleWrites>["create"] }) => {
  const [name, setName] = useState("")
  const [permissions, setPermissions] = useState("")
  const submit = (event: FormEvent) => {
    event.preventDefault()
    const list = permissions.split(/[\s,]+/).filter((p) => p !== "")
    create.mutate({ name, permissions: list }, {
      onSuccess: () => {
        setName("")
        setPermissions("")
      }
    })
  }
  return (
    <form className="form card" onSubmit={submit} aria-label="Create a Role">
      <h2>New Role</h2>
      <label>Name<input name="role-name" required maxLength={200} value={name} onChange={(e) => setName(e.target.value)} /></label>
      <label>
        <span>Permissions (<code>type:action</code>, separated by spaces or commas)</span>
        <input name="role-permissions" required value={permissions} onChange={(e) => setPermissions(e.target.value)} />
      </label>
      <div className="actions"><button type="submit" disabled={create.isPending}>Create Role</button></div>
      <Problems error={create.error} />
    </form>
  )
}

const RoleList = ({ ns }: { ns: string }) => {
  const roles = useRoles(ns)
  const { create, remove } = useRoleWrites(ns)
  const can = useNamespacePermissions(ns)
  // Listing needs Installation administer: when it is refused, nothing here is offered either.
  const readable = !roles.isError
  return (
    <>
      <IamNav ns={ns} />
      {readable && can("iam_role:create") && <CreateRole create={create} />}
      <ActionError error={remove.error} />
      <ResourceTable
        query={roles}
        what="the Roles of this Namespace"
        empty="No Roles."
        headers={["Name", "Permissions", "ID", ""]}
        marker="role"
        cells={(role) => (
          <>
            <td>{role.name}{role.builtin && <span className="muted"> (built-in)</span>}</td>
            <td className="mono">{role.permissions.join(" ")}</td>
            <td className="mono">{role.id}</td>
            <td>
              {!role.builtin && can("iam_role:delete") && (
                <DeleteButton what={`Role ${role.name}`} busy={remove.isPending} onConfirm={() => remove.mutate(role.id)} />
              )}
            </td>
          </>
        )}
      />
    </>
  )
}

export const IamRolesPage = () => <NamespacePage title="IAM roles">{(ns) => <RoleList ns={ns} />}</NamespacePage>
