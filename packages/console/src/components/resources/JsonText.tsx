/**
 * A JSON document typed in a textarea. Text that is not JSON is refused here, with the same
 * INVALID_REQUEST shape as the service's, before anything is sent.
 */
import { ApiFailure } from "../../api/client.js"

export const parseJson = (text: string, pointer: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    throw new ApiFailure(400, "INVALID_REQUEST", "The document is not valid JSON.", [{ code: "INVALID_FORMAT", path: pointer }])
  }
}

export const JsonText = ({ label, name, value, onChange, readOnly = false }: {
  label: string
  name: string
  value: string
  onChange?: (text: string) => void
  readOnly?: boolean
}) => (
  <label>
    {label}
    <textarea
      name={name}
      className="json"
      spellCheck={false}
      rows={12}
      readOnly={readOnly}
      value={value}
      onChange={(event) => onChange?.(event.target.value)}
    />
  </label>
)
