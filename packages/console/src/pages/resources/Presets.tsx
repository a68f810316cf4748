/** Presets of a Namespace (DESIGN §7): list, create from a JSON template, delete. */
import { type FormEvent, useState } from "react"
import { Link } from "react-router"
import { useNamespacePermissions } from "../../api/permissions.js"
import { useCreatePreset, useDeletePreset, usePresetList } from "../../api/resources/presets.js"
import { DeleteButton } from "../../components/resources/DeleteButton.js"
import { NamespacePage } from "../../components/NamespacePage.js"
import { JsonText, parseJson } from "../../components/resources/JsonText.js"
import { Problems } from "../../components/resources/Problems.js"
import { When } from "../../components/resources/When.js"
import { ResourceTable } from "../../components/resources/ResourceTable.js"
import { ActionError } from "../../components/States.js"
import "./resources.css"

const CreatePreset = ({ ns }: { ns: string }) => {
  const create = useCreatePreset(ns)
  const [name, setName] = useState("")
  const [text, setText] = useState("{}")
  const [local, setLocal] = useState<unknown>(null)
  const submit = (event: FormEvent) => {
    event.preventDefault()
    setLocal(null)
    try {
      create.mutate({ name, template: parseJson(text, "/template") }, {
        onSuccess: () => {
          setName("")
          setText("{}")
        }
      })
    } catch (error) {
      setLocal(error)
    }
  }
  return (
    <form className="form card" onSubmit={submit} aria-label="Create a Preset">
      <h2>New Preset</h2>
      <label>Name<input name="preset-name" required maxLength={200} value={name} onChange={(e) => setName(e.target.value)} /></label>
      <JsonText label="Template (a JSON object)" name="preset-template" value={text} onChange={setText} />
      <div className="actions"><button type="submit" disabled={create.isPending}>Create Preset</button></div>
      <Problems error={local ?? create.error} />
    </form>
  )
}

const PresetList = ({ ns }: { ns: string }) => {
  const list = usePresetList(ns)
  const remove = useDeletePreset(ns)
  const can = useNamespacePermissions(ns)
  return (
    <>
      {can("preset:create") && <CreatePreset ns={ns} />}
      <ActionError error={remove.error} />
      <ResourceTable
        query={list}
        what="Presets"
        empty="No Presets in this Namespace yet."
        headers={["Name", "ID", "Updated", ""]}
        marker="preset"
        cells={(preset) => (
          <>
            <td><Link to={`/ns/${ns}/presets/${preset.id}`}>{preset.name}</Link></td>
            <td className="mono">{preset.id}</td>
            <td><When at={preset.updatedAt} /></td>
            <td>
              {can("preset:delete") && (
                <DeleteButton what={`Preset ${preset.name}`} busy={remove.isPending} onConfirm={() => remove.mutate(preset.id)} />
              )}
            </td>
          </>
        )}
      />
    </>
  )
}

export const PresetsPage = () => <NamespacePage title="Presets">{(ns) => <PresetList ns={ns} />}</NamespacePage>
