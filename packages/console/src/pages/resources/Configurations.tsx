/** Configurations of a Namespace: list, create from a JSON document, delete (SPEC 2.8, 4.3). */
import { type FormEvent, useState } from "react"
import { Link } from "react-router"
import { useNamespacePermissions } from "../../api/permissions.js"
import { useConfigurations } from "../../api/configurations.js"
import { useCreateConfigurationDocument, useDeleteConfiguration } from "../../api/resources/configurations.js"
import { DeleteButton } from "../../components/resources/DeleteButton.js"
import { NamespacePage } from "../../components/NamespacePage.js"
import { JsonText, parseJson } from "../../components/resources/JsonText.js"
import { Problems } from "../../components/resources/Problems.js"
import { When } from "../../components/resources/When.js"
import { ResourceTable } from "../../components/resources/ResourceTable.js"
import { ActionError } from "../../components/States.js"
import "./resources.css"

const NEW_DOCUMENT = `{\n  "values": {}\n}`

/** The editor holds `{ values, secretBindings? }`; the body's pointers (`/values/...`) match it. */
export const documentOf = (text: string) => parseJson(text, "") as { values: unknown; secretBindings?: unknown }

/** The create form, here and on the Agent flow's `/configurations/new` page (`onCreated` goes on from there). */
export const CreateConfiguration = ({ ns, onCreated }: { ns: string; onCreated?: () => void }) => {
  const create = useCreateConfigurationDocument(ns)
  const [text, setText] = useState(NEW_DOCUMENT)
  const [local, setLocal] = useState<unknown>(null)
  const submit = (event: FormEvent) => {
    event.preventDefault()
    setLocal(null)
    try {
      create.mutate(documentOf(text), { onSuccess: () => (onCreated === undefined ? setText(NEW_DOCUMENT) : onCreated()) })
    } catch (error) {
      setLocal(error)
    }
  }
  return (
    <form className="form card" onSubmit={submit} aria-label="Create a Configuration">
      <h2>New Configuration</h2>
      <JsonText label="Document (values, secretBindings)" name="configuration-document" value={text} onChange={setText} />
      <div className="actions"><button type="submit" disabled={create.isPending}>Create Configuration</button></div>
      <Problems error={local ?? create.error} />
    </form>
  )
}

const ConfigurationList = ({ ns }: { ns: string }) => {
  const list = useConfigurations(ns)
  const remove = useDeleteConfiguration(ns)
  const can = useNamespacePermissions(ns)
  return (
    <>
      {can("configuration:create") && <CreateConfiguration ns={ns} />}
      <ActionError error={remove.error} />
      <ResourceTable
        query={list}
        what="Configurations"
        empty="No Configurations in this Namespace yet."
        headers={["ID", "Generation", "Secret bindings", "Updated", ""]}
        marker="configuration"
        cells={(configuration) => (
          <>
            <td className="mono"><Link to={`/ns/${ns}/configurations/${configuration.id}`}>{configuration.id}</Link></td>
            <td>{configuration.generation}</td>
            <td>{Object.keys(configuration.secretBindings).length}</td>
            <td><When at={configuration.updatedAt} /></td>
            <td>
              {can("configuration:delete") && (
                <DeleteButton what={`Configuration ${configuration.id}`} busy={remove.isPending} onConfirm={() => remove.mutate(configuration.id)} />
              )}
            </td>
          </>
        )}
      />
    </>
  )
}

export const ConfigurationsPage = () => (
  <NamespacePage title="Configurations">{(ns) => <ConfigurationList ns={ns} />}</NamespacePage>
)
