/**
 * Secrets of a Namespace: list, create, replace a value, delete. A value is typed into an
 * uncontrolled password field and taken from it only when sent (the field is emptied then): it
 * is never React state, a mutation's variables or cached, and no answer carries it back.
 */
import { type FormEvent, type RefObject, useRef, useState } from "react"
import { useNamespacePermissions } from "../../api/permissions.js"
import { type TakeValue, useCreateSecretWithValue, useDeleteSecret, useReplaceSecretValue } from "../../api/resources/secrets.js"
import { useSecrets } from "../../api/secrets.js"
import { DeleteButton } from "../../components/resources/DeleteButton.js"
import { NamespacePage } from "../../components/NamespacePage.js"
import { Problems } from "../../components/resources/Problems.js"
import { When } from "../../components/resources/When.js"
import { ResourceTable } from "../../components/resources/ResourceTable.js"
import { ActionError } from "../../components/States.js"
import "./resources.css"

const taker = (field: RefObject<HTMLInputElement | null>): TakeValue => () => {
  const input = field.current
  const value = input?.value ?? ""
  if (input !== null) input.value = ""
  return value
}

const ValueField = ({ field, label }: { field: RefObject<HTMLInputElement | null>; label: string }) => (
  <label>{label}<input ref={field} name="secret-value" type="password" autoComplete="off" required /></label>
)

/** The create form, here and on the Agent flow's `/secrets/new` page (`onCreated` goes on from there). */
export const CreateSecret = ({ ns, onCreated }: { ns: string; onCreated?: () => void }) => {
  const field = useRef<HTMLInputElement>(null)
  const create = useCreateSecretWithValue(ns, taker(field))
  const [name, setName] = useState("")
  const submit = (event: FormEvent) => {
    event.preventDefault()
    create.mutate(name, { onSuccess: () => (onCreated === undefined ? setName("") : onCreated()) })
  }
  return (
    <form className="form inline card" onSubmit={submit} aria-label="Create a Secret">
      <label>Name<input name="secret-name" required maxLength={200} value={name} onChange={(e) => setName(e.target.value)} /></label>
      <ValueField field={field} label="Value" />
      <button type="submit" disabled={create.isPending}>Create Secret</button>
      <Problems error={create.error} />
    </form>
  )
}

const ReplaceValue = ({ ns, id, name }: { ns: string; id: string; name: string }) => {
  const field = useRef<HTMLInputElement>(null)
  const replace = useReplaceSecretValue(ns, id, taker(field))
  const submit = (event: FormEvent) => {
    event.preventDefault()
    replace.mutate()
  }
  return (
    <form className="form inline" onSubmit={submit} aria-label={`Replace the value of ${name}`}>
      <ValueField field={field} label="New value" />
      <button type="submit" className="secondary" disabled={replace.isPending}>Replace value</button>
      {replace.isSuccess && <span role="status">Replaced.</span>}
      <Problems error={replace.error} />
    </form>
  )
}

const SecretList = ({ ns }: { ns: string }) => {
  const list = useSecrets(ns)
  const remove = useDeleteSecret(ns)
  const can = useNamespacePermissions(ns)
  return (
    <>
      {can("secret:create") && <CreateSecret ns={ns} />}
      <ActionError error={remove.error} />
      <ResourceTable
        query={list}
        what="Secrets"
        empty="No Secrets in this Namespace yet."
        headers={["Name", "Updated", ""]}
        marker="secret"
        cells={(secret) => (
          <>
            <td>{secret.name}<div className="mono muted">{secret.id}</div></td>
            <td><When at={secret.updatedAt} /></td>
            <td>
              {can("secret:update") && <ReplaceValue ns={ns} id={secret.id} name={secret.name} />}
              {can("secret:delete") && (
                <DeleteButton what={`Secret ${secret.name}`} busy={remove.isPending} onConfirm={() => remove.mutate(secret.id)} />
              )}
            </td>
          </>
        )}
      />
    </>
  )
}

export const SecretsPage = () => <NamespacePage title="Secrets">{(ns) => <SecretList ns={ns} />}</NamespacePage>
