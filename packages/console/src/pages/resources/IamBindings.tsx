/**
 * A Namespace's AccessBindings (SPEC 4.7): one Role granted to one principal on the Namespace or
 * one resource in it. Immutable: create and delete only.
 */
import { BindableKinds } from "@svc/core/api"
import { type FormEvent, useState } from "react"
import { useNamespacePermissions } from "../../api/permissions.js"
import { useBindings, useBindingWrites, useRoles } from "../../api/resources/iam.js"
import { DeleteButton } from "../../components/resources/DeleteButton.js"
import { IamNav } from "../../components/resources/IamNav.js"
import { NamespacePage } from "../../components/NamespacePage.js"
import { Problems } from "../../components/resources/Problems.js"
import { When } from "../../components/resources/When.js"
import { ResourceTable } from "../../components/resources/ResourceTable.js"
import { ActionError } from "../../components/States.js"
import "./resources.css"

const CreateBinding = ({ ns, create }: { ns: string; create: ReturnType<typeof useBindingWrites>["create"] }) => {
  const roles = useRoles(ns)
  const [principalId, setPrincipalId] = useState("")
  const [roleId, setRoleId] = useState("")
  const [kind, setKind] = useState<string>("namespace")
  const [resourceId, setResourceId] = useState(ns)
  const submit = (event: FormEvent) => {
    event.preventDefault()
    create.mutate({ principalId, roleId, resource: { kind, id: resourceId } }, { onSuccess: () => setPrincipalId("") })
  }
  return (
    <form className="form card" onSubmit={submit} aria-label="Create an access binding">
      <h2>New access binding</h2>
      <label><span>Principal (<code>prn_…</code> or <code>sp_…</code>)</span><input name="binding-principal" required value={principalId} onChange={(e) => setPrincipalId(e.target.value)} /></label>
      <label>
        Role
        <select name="binding-role" required value={roleId} onChange={(e) => setRoleId(e.target.value)}>
          <option value="">choose…</option>
          {roles.data?.map((role) => <option key={role.id} value={role.id}>{role.name}</option>)}
        </select>
      </label>
      <label>
        Resource kind
        <select
          name="binding-kind"
          value={kind}
          onChange={(e) => {
            setKind(e.target.value)
            setResourceId(e.target.value === "namespace" ? ns : "")
          }}
        >
          {BindableKinds.map((k) => <option key={k} value={k}>{k}</option>)}
        </select>
      </label>
      <label>Resource ID<input name="binding-resource" required value={resourceId} onChange={(e) => setResourceId(e.target.value)} /></label>
      <div className="actions"><button type="submit" disabled={create.isPending}>Create binding</button></div>
      <Problems error={create.error} />
    </form>
  )
}

const BindingList = ({ ns }: { ns: string }) => {
  const bindings = useBindings(ns)
  const roles = useRoles(ns)
  const roleName = (roleId: string) => roles.data?.find((role) => role.id === roleId)?.name
  const { create, remove } = useBindingWrites(ns)
  const can = useNamespacePermissions(ns)
  const readable = !bindings.isError
  return (
    <>
      <IamNav ns={ns} />
      {readable && can("iam_access_binding:create") && <CreateBinding ns={ns} create={create} />}
      <ActionError error={remove.error} />
      <ResourceTable
        query={bindings}
        what="the access bindings of this Namespace"
        empty="No access bindings."
        headers={["Principal", "Role", "Resource", "Created", ""]}
        marker="binding"
        cells={(binding) => (
          <>
            <td className="mono">{binding.principalId}</td>
            <td>{roleName(binding.roleId)}<div className="mono muted">{binding.roleId}</div></td>
            <td className="mono">{binding.resource.kind} {binding.resource.id}</td>
            <td><When at={binding.createdAt} /></td>
            <td>
              {can("iam_access_binding:delete") && (
                <DeleteButton what={`the binding of ${binding.principalId}`} busy={remove.isPending} onConfirm={() => remove.mutate(binding.id)} />
              )}
            </td>
          </>
        )}
      />
    </>
  )
}

export const IamBindingsPage = () => <NamespacePage title="IAM access bindings">{(ns) => <BindingList ns={ns} />}</NamespacePage>
