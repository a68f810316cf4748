/**
 * One service account (SPEC 2.11, 4.5): its non-secret metadata and credential readiness, the
 * actions the API offers (issue the provider credential; set a native `api_key` reference by
 * Secret name and key), and delete. A refusal (409 a second issuance or while an Agent uses the
 * account, 503 without a ServiceAccount Driver, 403) is shown with the service's own message.
 */
import type { ServiceAccount } from "@svc/core/api"
import { type FormEvent, useState } from "react"
import { useNavigate, useParams } from "react-router"
import { useNamespacePermissions } from "../../api/permissions.js"
import { isServiceAccountId } from "../../api/resources/ids.js"
import {
  useDeleteServiceAccount,
  useIssueCredential,
  useServiceAccount,
  useSetNativeCredential
} from "../../api/resources/serviceAccounts.js"
import { DeleteButton } from "../../components/resources/DeleteButton.js"
import { NamespacePage } from "../../components/NamespacePage.js"
import { Problems } from "../../components/resources/Problems.js"
import { When } from "../../components/resources/When.js"
import { ActionError, NotFound, QueryView } from "../../components/States.js"
import { StatusBadge } from "../../components/StatusBadge.js"
import { readinessOf } from "./ServiceAccounts.js"
import "./resources.css"

const Readiness = ({ credential }: { credential: ServiceAccount["credential"] }) => (
  <>
    <dt>Credential</dt><dd data-field="credential">{readinessOf(credential)}</dd>
    {credential?.issuedAt !== undefined && <><dt>Issued</dt><dd><When at={credential.issuedAt} /></dd></>}
    {credential?.expiresAt !== undefined && <><dt>Expires</dt><dd><When at={credential.expiresAt} /></dd></>}
  </>
)

const IssueCredential = ({ ns, id }: { ns: string; id: string }) => {
  const issue = useIssueCredential(ns, id)
  return (
    <div className="card" role="group" aria-label="Issue the provider credential">
      <h2>Provider credential</h2>
      <p className="muted">A Backend-managed account's one credential, issued by its ServiceAccount Driver.</p>
      <div className="actions">
        <button type="button" disabled={issue.isPending} onClick={() => issue.mutate()}>Issue credential</button>
        {issue.isSuccess && <span role="status">Issued.</span>}
      </div>
      <Problems error={issue.error} />
    </div>
  )
}

const SetNativeReference = ({ ns, id }: { ns: string; id: string }) => {
  const set = useSetNativeCredential(ns, id)
  const [name, setName] = useState("")
  const [key, setKey] = useState("value")
  const submit = (event: FormEvent) => {
    event.preventDefault()
    set.mutate({ name, key })
  }
  return (
    <form className="form card" onSubmit={submit} aria-label="Set the api_key reference">
      <h2>Native api_key reference</h2>
      <p className="muted">A native account's key, named by a Secret of this Namespace; its value is never read here.</p>
      <div className="form inline">
        <label>Secret name<input name="secret-ref-name" required maxLength={200} value={name} onChange={(e) => setName(e.target.value)} /></label>
        <label>Key<input name="secret-ref-key" required maxLength={253} value={key} onChange={(e) => setKey(e.target.value)} /></label>
        <button type="submit" className="secondary" disabled={set.isPending}>Set reference</button>
        {set.isSuccess && <span role="status">Set.</span>}
      </div>
      <Problems error={set.error} />
    </form>
  )
}

const ServiceAccountDetail = ({ ns, id }: { ns: string; id: string }) => {
  const account = useServiceAccount(ns, id)
  const remove = useDeleteServiceAccount(ns)
  const can = useNamespacePermissions(ns)
  const navigate = useNavigate()
  return (
    <QueryView query={account} what="This service account">
      {(saved) => (
        <>
          <dl className="fields card">
            <dt>Name</dt><dd data-field="name">{saved.name}</dd>
            <dt>ID</dt><dd className="mono">{saved.id}</dd>
            <dt>Managed</dt><dd data-field="managed">{saved.managed ? "Backend-managed" : "native"}</dd>
            <dt>State</dt><dd><StatusBadge status={saved.state} /></dd>
            <Readiness credential={saved.credential} />
            <dt>Created</dt><dd><When at={saved.createdAt} /></dd>
          </dl>
          {can("service_account:update") && (
            <>
              <IssueCredential ns={ns} id={saved.id} />
              <SetNativeReference ns={ns} id={saved.id} />
            </>
          )}
          {can("service_account:delete") && (
            <div className="actions">
              <DeleteButton
                what={`service account ${saved.name}`}
                busy={remove.isPending}
                onConfirm={() => remove.mutate(saved.id, { onSuccess: () => navigate(`/ns/${ns}/service-accounts`, { replace: true }) })}
              />
            </div>
          )}
          <ActionError error={remove.error} />
        </>
      )}
    </QueryView>
  )
}

export const ServiceAccountPage = () => {
  const { serviceAccountId = "" } = useParams()
  return (
    <NamespacePage title="Service account">
      {(ns) => isServiceAccountId(serviceAccountId)
        ? <ServiceAccountDetail ns={ns} id={serviceAccountId} />
        : <NotFound what="This service account" />}
    </NamespacePage>
  )
}
