/**
 * Service accounts of a Namespace (SPEC 2.11, 4.5): list, create by name, delete. Each row
 * shows only what the API returns: name, whether a Backend manages it, its state and whether
 * its credential is ready.
 */
import type { ServiceAccount } from "@svc/core/api"
import { type FormEvent, useState } from "react"
import { Link } from "react-router"
import { useNamespacePermissions } from "../../api/permissions.js"
import { useCreateServiceAccount, useDeleteServiceAccount, useServiceAccountList } from "../../api/resources/serviceAccounts.js"
import { DeleteButton } from "../../components/resources/DeleteButton.js"
import { NamespacePage } from "../../components/NamespacePage.js"
import { Problems } from "../../components/resources/Problems.js"
import { When } from "../../components/resources/When.js"
import { ResourceTable } from "../../components/resources/ResourceTable.js"
import { ActionError } from "../../components/States.js"
import { StatusBadge } from "../../components/StatusBadge.js"
import "./resources.css"

/** The credential's readiness in words: none yet, or its kind and whether a deployment could use it now. */
export const readinessOf = (credential: ServiceAccount["credential"]) =>
  credential === null ? "none" : `${credential.kind}, ${credential.ready ? "ready" : "not ready"}`

const CreateServiceAccount = ({ ns }: { ns: string }) => {
  const create = useCreateServiceAccount(ns)
  const [name, setName] = useState("")
  const submit = (event: FormEvent) => {
    event.preventDefault()
    create.mutate(name, { onSuccess: () => setName("") })
  }
  return (
    <form className="form inline card" onSubmit={submit} aria-label="Create a service account">
      <label>Name<input name="service-account-name" required maxLength={200} value={name} onChange={(e) => setName(e.target.value)} /></label>
      <button type="submit" disabled={create.isPending}>Create service account</button>
      <Problems error={create.error} />
    </form>
  )
}

const ServiceAccountList = ({ ns }: { ns: string }) => {
  const list = useServiceAccountList(ns)
  const remove = useDeleteServiceAccount(ns)
  const can = useNamespacePermissions(ns)
  return (
    <>
      {can("service_account:create") && <CreateServiceAccount ns={ns} />}
      <ActionError error={remove.error} />
      <ResourceTable
        query={list}
        what="Service accounts"
        empty="No service accounts in this Namespace yet."
        headers={["Name", "Managed", "State", "Credential", "Created", ""]}
        marker="service-account"
        cells={(account) => (
          <>
            <td><Link to={`/ns/${ns}/service-accounts/${account.id}`}>{account.name}</Link><div className="mono muted">{account.id}</div></td>
            <td>{account.managed ? "Backend-managed" : "native"}</td>
            <td><StatusBadge status={account.state} /></td>
            <td data-field="credential">{readinessOf(account.credential)}</td>
            <td><When at={account.createdAt} /></td>
            <td>
              {can("service_account:delete") && (
                <DeleteButton what={`service account ${account.name}`} busy={remove.isPending} onConfirm={() => remove.mutate(account.id)} />
              )}
            </td>
          </>
        )}
      />
    </>
  )
}

export const ServiceAccountsPage = () => <NamespacePage title="Service accounts">{(ns) => <ServiceAccountList ns={ns} />}</NamespacePage>
