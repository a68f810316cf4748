/**
 * A new Secret: the minimal form the Agent flow needs (a later page manages Secrets fully).
 * The value goes to the service once and is never shown again.
 */
import { type FormEvent, useState } from "react"
import { Link, useNavigate } from "react-router"
import { useCreateSecret } from "../api/secrets.js"
import { NamespacePage, RequirePermission } from "../components/NamespacePage.js"
import { ActionError } from "../components/States.js"

const SecretForm = ({ ns }: { ns: string }) => {
  const create = useCreateSecret(ns)
  const navigate = useNavigate()
  const [name, setName] = useState("")
  const [value, setValue] = useState("")
  const submit = (event: FormEvent) => {
    event.preventDefault()
    create.mutate({ name, value }, { onSuccess: () => navigate(`/ns/${ns}/agents/new`) })
  }
  return (
    <form className="form" onSubmit={submit} aria-label="Create a Secret">
      <label>Name<input name="secret-name" required maxLength={200} value={name} onChange={(e) => setName(e.target.value)} /></label>
      <label>Value<input name="secret-value" type="password" autoComplete="off" required value={value} onChange={(e) => setValue(e.target.value)} /></label>
      <div className="actions">
        <button type="submit" disabled={create.isPending}>Create Secret</button>
        <Link to={`/ns/${ns}/agents`}>Cancel</Link>
      </div>
      <ActionError error={create.error} />
    </form>
  )
}

export const SecretCreatePage = () => (
  <NamespacePage title="New Secret">
    {(ns) => (
      <RequirePermission ns={ns} permission="secret:create" what="the Secret form (you may not create Secrets here)">
        <SecretForm ns={ns} />
      </RequirePermission>
    )}
  </NamespacePage>
)
