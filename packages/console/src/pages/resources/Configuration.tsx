/**
 * One Configuration: its document in a JSON editor, saved with PATCH (a new generation), and
 * delete. Problems the contract finds are listed at their JSON Pointers.
 */
import type { Configuration } from "@svc/core/api"
import { type FormEvent, useState } from "react"
import { useNavigate, useParams } from "react-router"
import { useNamespacePermissions } from "../../api/permissions.js"
import { useConfiguration, useDeleteConfiguration, useUpdateConfiguration } from "../../api/resources/configurations.js"
import { isConfigurationId } from "../../api/resources/ids.js"
import { DeleteButton } from "../../components/resources/DeleteButton.js"
import { NamespacePage } from "../../components/NamespacePage.js"
import { JsonText } from "../../components/resources/JsonText.js"
import { Problems } from "../../components/resources/Problems.js"
import { When } from "../../components/resources/When.js"
import { ActionError, NotFound, QueryView } from "../../components/States.js"
import { documentOf } from "./Configurations.js"
import "./resources.css"

type Saved = Configuration

const textOf = (saved: Saved) => JSON.stringify({ values: saved.values, secretBindings: saved.secretBindings }, null, 2)

const Editor = ({ ns, saved, canUpdate }: { ns: string; saved: Saved; canUpdate: boolean }) => {
  const update = useUpdateConfiguration(ns, saved.id)
  const [text, setText] = useState(() => textOf(saved))
  const [local, setLocal] = useState<unknown>(null)
  const submit = (event: FormEvent) => {
    event.preventDefault()
    setLocal(null)
    try {
      update.mutate(documentOf(text), { onSuccess: (next) => setText(textOf(next)) })
    } catch (error) {
      setLocal(error)
    }
  }
  return (
    <form className="form" onSubmit={submit} aria-label="Edit the Configuration">
      <JsonText label="Document (values, secretBindings)" name="configuration-document" value={text} onChange={setText} readOnly={!canUpdate} />
      {canUpdate && <div className="actions"><button type="submit" disabled={update.isPending}>Save (new generation)</button></div>}
      {update.isSuccess && <p role="status">Saved as generation {update.data.generation}.</p>}
      <Problems error={local ?? update.error} />
    </form>
  )
}

const ConfigurationDetail = ({ ns, id }: { ns: string; id: string }) => {
  const configuration = useConfiguration(ns, id)
  const remove = useDeleteConfiguration(ns)
  const can = useNamespacePermissions(ns)
  const navigate = useNavigate()
  return (
    <QueryView query={configuration} what="This Configuration">
      {(saved) => (
        <>
          <dl className="fields card">
            <dt>ID</dt><dd className="mono">{saved.id}</dd>
            <dt>Kind</dt><dd>{saved.kind}</dd>
            <dt>Generation</dt><dd data-field="generation">{saved.generation}</dd>
            <dt>Created</dt><dd><When at={saved.createdAt} /></dd>
            <dt>Updated</dt><dd><When at={saved.updatedAt} /></dd>
          </dl>
          <Editor key={saved.generation} ns={ns} saved={saved} canUpdate={can("configuration:update")} />
          {can("configuration:delete") && (
            <div className="actions">
              <DeleteButton
                what={`Configuration ${saved.id}`}
                busy={remove.isPending}
                onConfirm={() => remove.mutate(saved.id, { onSuccess: () => navigate(`/ns/${ns}/configurations`, { replace: true }) })}
              />
            </div>
          )}
          <ActionError error={remove.error} />
        </>
      )}
    </QueryView>
  )
}

export const ConfigurationPage = () => {
  const { configurationId = "" } = useParams()
  return (
    <NamespacePage title="Configuration">
      {(ns) => isConfigurationId(configurationId)
        ? <ConfigurationDetail ns={ns} id={configurationId} />
        : <NotFound what="This Configuration" />}
    </NamespacePage>
  )
}
