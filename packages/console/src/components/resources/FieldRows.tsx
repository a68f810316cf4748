/**
 * An editable list of named fields (a map of field name to value) inside a form: each row a
 * name and either a text value or, with `choices`, a value picked from a list (a Secret by name).
 */
export interface Field {
  readonly name: string
  readonly value: string
}

export const FieldRows = ({ legend, what, fields, onChange, choices }: {
  legend: string
  /** Names the inputs (`<what>-field`, `<what>-value`) and the buttons. */
  what: string
  fields: ReadonlyArray<Field>
  onChange: (fields: ReadonlyArray<Field>) => void
  choices?: ReadonlyArray<{ readonly value: string; readonly label: string }>
}) => {
  const set = (index: number, change: Partial<Field>) => onChange(fields.map((field, i) => i === index ? { ...field, ...change } : field))
  return (
    <fieldset>
      <legend>{legend}</legend>
      {fields.map((field, index) => (
        <div className="form inline" key={index} data-row={what}>
          <label>Field<input name={`${what}-field`} required maxLength={64} value={field.name} onChange={(e) => set(index, { name: e.target.value })} /></label>
          {choices === undefined
            ? <label>Value<input className="wide" name={`${what}-value`} maxLength={2048} value={field.value} onChange={(e) => set(index, { value: e.target.value })} /></label>
            : (
              <label>Secret
                <select name={`${what}-value`} required value={field.value} onChange={(e) => set(index, { value: e.target.value })}>
                  <option value="">Choose a Secret…</option>
                  {choices.map((choice) => <option key={choice.value} value={choice.value}>{choice.label}</option>)}
                </select>
              </label>
            )}
          <button type="button" className="secondary" onClick={() => onChange(fields.filter((_, i) => i !== index))}>Remove</button>
        </div>
      ))}
      <div><button type="button" className="secondary" onClick={() => onChange([...fields, { name: "", value: "" }])}>Add {what} field</button></div>
    </fieldset>
  )
}
