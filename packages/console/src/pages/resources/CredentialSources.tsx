/**
 * Credential sources of a Namespace (SPEC 2.10, 4.6): list, create, delete. The create form
 * takes a name, a type, `config` fields (plain strings) and `secrets` fields, each a Secret of
 * this Namespace picked by name and sent as a reference: no value is typed or shown here.
 */
import { type FormEvent, useState } from "react"
import { Link } from "react-router"
import { useNamespacePermissions } from "../../api/permissions.js"
import { useCreateCredentialSource, useCredentialSourceList, useDeleteCredentialSource } from "../../api/resources/credentialSources.js"
import { useSecrets } from "../../api/secrets.js"
import { DeleteButton } from "../../components/resources/DeleteButton.js"
import { NamespacePage } from "../../components/NamespacePage.js"
import { type Field, FieldRows } from "../../components/resources/FieldRows.js"
import { Problems } from "../../components/resources/Problems.js"
import { When } from "../../components/resources/When.js"
import { ResourceTable } from "../../components/resources/ResourceTable.js"
import { ActionError } from "../../components/States.js"
import { StatusBadge } from "../../components/StatusBadge.js"
import "./resources.css"

const mapOf = (fields: ReadonlyArray<Field>) => Object.fromEntries(fields.map((field) => [field.name, field.value]))

const CreateCredentialSource = ({ ns }: { ns: string }) => {
  const create = useCreateCredentialSource(ns)
  const secrets = useSecrets(ns)
  const [name, setName] = useState("")
  const [type, setType] = useState("")
  const [config, setConfig] = useState<ReadonlyArray<Field>>([])
  const [secretFields, setSecretFields] = useState<ReadonlyArray<Field>>([])
  const submit = (event: FormEvent) => {
    event.preventDefault()
    create.mutate({ name, type, config: mapOf(config), secrets: mapOf(secretFields) }, {
      onSuccess: () => {
        setName("")
        setType("")
        setConfig([])
        setSecretFields([])
      }
    })
  }
  const choices = (secrets.data ?? []).map((secret) => ({ value: secret.id, label: secret.name }))
  return (
    <form className="form card" onSubmit={submit} aria-label="Create a credential source">
      <h2>New credential source</h2>
      <div className="form inline">
        <label>Name<input name="source-name" required maxLength={200} value={name} onChange={(e) => setName(e.target.value)} /></label>
        <label>Type<input name="source-type" required maxLength={64} placeholder="e.g. modelvendor" value={type} onChange={(e) => setType(e.target.value)} /></label>
      </div>
      <FieldRows legend="Config" what="config" fields={config} onChange={setConfig} />
      <FieldRows legend="Secrets" what="secret" fields={secretFields} onChange={setSecretFields} choices={choices} />
      <div className="actions"><button type="submit" disabled={create.isPending}>Create credential source</button></div>
      <Problems error={create.error} />
    </form>
  )
}

const CredentialSourceList = ({ ns }: { ns: string }) => {
  const list = useCredentialSourceList(ns)
  const remove = useDeleteCredentialSource(ns)
  const can = useNamespacePermissions(ns)
  return (
    <>
      {can("credential_source:create") && <CreateCredentialSource ns={ns} />}
      <ActionError error={remove.error} />
      <ResourceTable
        query={list}
        what="Credential sources"
        empty="No credential sources in this Namespace yet."
        headers={["Name", "Type", "State", "Created", ""]}
        marker="credential-source"
        cells={(source) => (
          <>
            <td><Link to={`/ns/${ns}/credential-sources/${source.id}`}>{source.name}</Link><div className="mono muted">{source.id}</div></td>
            <td>{source.type}</td>
            <td><StatusBadge status={source.state} /></td>
            <td><When at={source.createdAt} /></td>
            <td>
              {can("credential_source:delete") && (
                <DeleteButton what={`credential source ${source.name}`} busy={remove.isPending} onConfirm={() => remove.mutate(source.id)} />
              )}
            </td>
          </>
        )}
      />
    </>
  )
}

export const CredentialSourcesPage = () => <NamespacePage title="Credential sources">{(ns) => <CredentialSourceList ns={ns} />}</NamespacePage>
