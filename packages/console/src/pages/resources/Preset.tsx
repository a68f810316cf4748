/** One Preset, read-only: its name and template as stored (DESIGN §7). */
import { useParams } from "react-router"
import { usePreset } from "../../api/resources/presets.js"
import { isPresetId } from "../../api/resources/ids.js"
import { NamespacePage } from "../../components/NamespacePage.js"
import { JsonText } from "../../components/resources/JsonText.js"
import { When } from "../../components/resources/When.js"
import { NotFound, QueryView } from "../../components/States.js"
import "./resources.css"

const PresetDetail = ({ ns, id }: { ns: string; id: string }) => {
  const preset = usePreset(ns, id)
  return (
    <QueryView query={preset} what="This Preset">
      {(saved) => (
        <>
          <dl className="fields card">
            <dt>Name</dt><dd>{saved.name}</dd>
            <dt>ID</dt><dd className="mono">{saved.id}</dd>
            <dt>Created</dt><dd><When at={saved.createdAt} /></dd>
            <dt>Updated</dt><dd><When at={saved.updatedAt} /></dd>
          </dl>
          <div className="form"><JsonText label="Template" name="preset-template" value={JSON.stringify(saved.template, null, 2)} readOnly /></div>
        </>
      )}
    </QueryView>
  )
}

export const PresetPage = () => {
  const { presetId = "" } = useParams()
  return (
    <NamespacePage title="Preset">
      {(ns) => isPresetId(presetId) ? <PresetDetail ns={ns} id={presetId} /> : <NotFound what="This Preset" />}
    </NamespacePage>
  )
}
