/**
 * One credential source (SPEC 2.10, 3, 4.6): its name, type, config, the Secrets it names (by
 * reference: a value never reaches the console), its state here and the live `status` at the
 * Credential Gateway from the single read, and delete (409 while an Agent binds it).
 */
import type { CredentialSource } from "@svc/core/api"
import { useNavigate, useParams } from "react-router"
import { useNamespacePermissions } from "../../api/permissions.js"
import { useCredentialSource, useDeleteCredentialSource } from "../../api/resources/credentialSources.js"
import { isCredentialSourceId } from "../../api/resources/ids.js"
import { useSecrets } from "../../api/secrets.js"
import { DeleteButton } from "../../components/resources/DeleteButton.js"
import { NamespacePage } from "../../components/NamespacePage.js"
import { When } from "../../components/resources/When.js"
import { ActionError, NotFound, QueryView } from "../../components/States.js"
import { StatusBadge } from "../../components/StatusBadge.js"
import "./resources.css"

const Entries = ({ label, marker, entries }: { label: string; marker: string; entries: ReadonlyArray<readonly [string, string]> }) => (
  <>
    <dt>{label}</dt>
    <dd>
      {entries.length === 0 ? <span className="muted">none</span> : (
        <ul className="entries">
          {entries.map(([field, value]) => <li key={field} {...{ [`data-${marker}`]: field }}><code>{field}</code> {value}</li>)}
        </ul>
      )}
    </dd>
  </>
)

/** Each Secret field by the Secret's name where this Namespace's list has it, else by its ID. */
const SecretEntries = ({ ns, secrets }: { ns: string; secrets: CredentialSource["secrets"] }) => {
  const list = useSecrets(ns)
  const nameOf = (id: string) => list.data?.find((secret) => secret.id === id)?.name
  return (
    <Entries
      label="Secrets"
      marker="secret-field"
      entries={Object.entries(secrets).map(([field, ref]) => [field, `Secret ${nameOf(ref.id) ?? ref.id}`] as const)}
    />
  )
}

const LiveStatus = ({ status }: { status: CredentialSource["status"] }) => (
  <>
    <dt>Gateway status</dt>
    <dd data-field="status">
      {status === undefined ? <span className="muted">unknown</span> : <StatusBadge status={status.state} />}
      {status?.reason !== undefined && <span className="muted"> {status.reason}</span>}
    </dd>
  </>
)

const CredentialSourceDetail = ({ ns, id }: { ns: string; id: string }) => {
  const source = useCredentialSource(ns, id)
  const remove = useDeleteCredentialSource(ns)
  const can = useNamespacePermissions(ns)
  const navigate = useNavigate()
  return (
    <QueryView query={source} what="This credential source">
      {(saved) => (
        <>
          <dl className="fields card">
            <dt>Name</dt><dd data-field="name">{saved.name}</dd>
            <dt>ID</dt><dd className="mono">{saved.id}</dd>
            <dt>Type</dt><dd data-field="type">{saved.type}</dd>
            <dt>State</dt><dd><StatusBadge status={saved.state} /></dd>
            <LiveStatus status={saved.status} />
            <Entries label="Config" marker="config-field" entries={Object.entries(saved.config)} />
            <SecretEntries ns={ns} secrets={saved.secrets} />
            <dt>Created</dt><dd><When at={saved.createdAt} /></dd>
          </dl>
          <div className="actions">
            <button type="button" className="secondary" disabled={source.isFetching} onClick={() => void source.refetch()}>Refresh status</button>
            {can("credential_source:delete") && (
              <DeleteButton
                what={`credential source ${saved.name}`}
                busy={remove.isPending}
                onConfirm={() => remove.mutate(saved.id, { onSuccess: () => navigate(`/ns/${ns}/credential-sources`, { replace: true }) })}
              />
            )}
          </div>
          <ActionError error={remove.error} />
        </>
      )}
    </QueryView>
  )
}

export const CredentialSourcePage = () => {
  const { credentialSourceId = "" } = useParams()
  return (
    <NamespacePage title="Credential source">
      {(ns) => isCredentialSourceId(credentialSourceId)
        ? <CredentialSourceDetail ns={ns} id={credentialSourceId} />
        : <NotFound what="This credential source" />}
    </NamespacePage>
  )
}
