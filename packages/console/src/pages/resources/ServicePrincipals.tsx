/**
 * Service principals (non-Agent automation identities) of the Installation, or of the Namespace
 * in the URL: list, create, delete. Both need Installation `administer`; keys for them are
 * issued on the service keys page.
 */
import { type FormEvent, useState } from "react"
import { Link } from "react-router"
import { useInstallationPermissions } from "../../api/permissions.js"
import { useServicePrincipals, useServicePrincipalWrites } from "../../api/resources/iam.js"
import { DeleteButton } from "../../components/resources/DeleteButton.js"
import { IamNav } from "../../components/resources/IamNav.js"
import { NamespacePage } from "../../components/NamespacePage.js"
import { Problems } from "../../components/resources/Problems.js"
import { When } from "../../components/resources/When.js"
import { ResourceTable } from "../../components/resources/ResourceTable.js"
import { ActionError } from "../../components/States.js"
import "./resources.css"

const CreatePrincipal = ({ create }: { create: ReturnType<typeof useServicePrincipalWrites>["create"] }) => {
  const [name, setName] = useState("")
  const submit = (event: FormEvent) => {
    event.preventDefault()
    create.mutate(name, { onSuccess: () => setName("") })
  }
  return (
    <form className="form inline card" onSubmit={submit} aria-label="Create a service principal">
      <label>Name<input name="principal-name" required maxLength={200} value={name} onChange={(e) => setName(e.target.value)} /></label>
      <button type="submit" disabled={create.isPending}>Create service principal</button>
      <Problems error={create.error} />
    </form>
  )
}

const PrincipalList = ({ ns }: { ns: string | undefined }) => {
  const principals = useServicePrincipals(ns)
  const { create, remove } = useServicePrincipalWrites(ns)
  const can = useInstallationPermissions()
  const administers = can("installation:administer") && !principals.isError
  return (
    <>
      {ns !== undefined && <IamNav ns={ns} />}
      {administers && <CreatePrincipal create={create} />}
      <ActionError error={remove.error} />
      <ResourceTable
        query={principals}
        what="service principals"
        empty="No service principals."
        headers={["Name", "ID", "Created", ""]}
        marker="principal"
        cells={(principal) => (
          <>
            <td>{principal.name}</td>
            <td className="mono">{principal.id}</td>
            <td><When at={principal.createdAt} /></td>
            <td>
              {administers && (
                <>
                  <Link to={`/admin/service-keys?principal=${principal.id}${ns === undefined ? "" : `&ns=${ns}`}`}>Issue a key</Link>{" "}
                  <DeleteButton what={`service principal ${principal.name}`} busy={remove.isPending} onConfirm={() => remove.mutate(principal.id)} />
                </>
              )}
            </td>
          </>
        )}
      />
    </>
  )
}

export const InstallationPrincipalsPage = () => (
  <section>
    <h1>Installation service principals</h1>
    <PrincipalList ns={undefined} />
  </section>
)

export const NamespacePrincipalsPage = () => (
  <NamespacePage title="IAM service principals">{(ns) => <PrincipalList ns={ns} />}</NamespacePage>
)
