/**
 * A new Configuration of kind `agent`: its `values` as a JSON document (the minimal form the
 * Agent flow needs; a later page manages Configurations fully).
 */
import { type FormEvent, useState } from "react"
import { Link, useNavigate } from "react-router"
import { ApiFailure } from "../api/client.js"
import { useCreateConfiguration } from "../api/configurations.js"
import { NamespacePage, RequirePermission } from "../components/NamespacePage.js"
import { ActionError } from "../components/States.js"

const parseValues = (text: string): { readonly [key: string]: unknown } => {
  const parsed: unknown = JSON.parse(text)
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new Error("Values must be a JSON object.")
  return parsed as { readonly [key: string]: unknown }
}

const ConfigurationForm = ({ ns }: { ns: string }) => {
  const create = useCreateConfiguration(ns)
  const navigate = useNavigate()
  const [values, setValues] = useState("{}")
  const [formError, setFormError] = useState<unknown>(null)
  const submit = (event: FormEvent) => {
    event.preventDefault()
    setFormError(null)
    try {
      create.mutate(parseValues(values), { onSuccess: () => navigate(`/ns/${ns}/agents/new`) })
    } catch (error) {
      setFormError(new ApiFailure(400, "INVALID_REQUEST", error instanceof Error ? error.message : "Values must be JSON."))
    }
  }
  return (
    <form className="form" onSubmit={submit} aria-label="Create a Configuration">
      <label>Values (JSON)<textarea name="configuration-values" value={values} onChange={(e) => setValues(e.target.value)} /></label>
      <div className="actions">
        <button type="submit" disabled={create.isPending}>Create Configuration</button>
        <Link to={`/ns/${ns}/agents`}>Cancel</Link>
      </div>
      <ActionError error={formError ?? create.error} />
    </form>
  )
}

export const ConfigurationCreatePage = () => (
  <NamespacePage title="New Configuration">
    {(ns) => (
      <RequirePermission ns={ns} permission="configuration:create" what="the Configuration form (you may not create Configurations here)">
        <ConfigurationForm ns={ns} />
      </RequirePermission>
    )}
  </NamespacePage>
)
