/**
 * Human accounts (SPEC 4.1, 5.7), for Installation administrators: create an account, open one
 * by user ID, and see the recovery designation. The service has no account list: an account is
 * reached from its creation, the designation, or its user ID.
 */
import { type FormEvent, useRef, useState } from "react"
import { Link, useNavigate } from "react-router"
import { isFailure } from "../../api/client.js"
import { useInstallationPermissions } from "../../api/permissions.js"
import { useCreateAccount, useRecovery } from "../../api/resources/admin.js"
import { Problems } from "../../components/resources/Problems.js"
import { Denied, ErrorState, Loading } from "../../components/States.js"
import "./resources.css"

const CreateAccount = () => {
  const create = useCreateAccount()
  const navigate = useNavigate()
  const password = useRef<HTMLInputElement>(null)
  const [email, setEmail] = useState("")
  const [name, setName] = useState("")
  const [roleId, setRoleId] = useState("")
  const submit = (event: FormEvent) => {
    event.preventDefault()
    const field = password.current
    const body = { email, password: field?.value ?? "", ...(name === "" ? {} : { name }), ...(roleId === "" ? {} : { roleId }) }
    if (field !== null) field.value = ""
    create.mutate(body, { onSuccess: (account) => navigate(`/admin/accounts/${encodeURIComponent(account.id)}`) })
  }
  return (
    <form className="form card" onSubmit={submit} aria-label="Create an account">
      <h2>New account</h2>
      <label>Email<input name="account-email" type="email" required maxLength={320} value={email} onChange={(e) => setEmail(e.target.value)} /></label>
      <label>Password (12-128 characters)<input ref={password} name="account-password" type="password" autoComplete="new-password" required minLength={12} maxLength={128} /></label>
      <label>Name<input name="account-name" maxLength={200} value={name} onChange={(e) => setName(e.target.value)} /></label>
      <label>Installation Role ID (none: no grants)<input name="account-role" maxLength={200} value={roleId} onChange={(e) => setRoleId(e.target.value)} /></label>
      <div className="actions"><button type="submit" disabled={create.isPending}>Create account</button></div>
      <Problems error={create.error} />
    </form>
  )
}

const OpenAccount = () => {
  const navigate = useNavigate()
  const [userId, setUserId] = useState("")
  const submit = (event: FormEvent) => {
    event.preventDefault()
    navigate(`/admin/accounts/${encodeURIComponent(userId.trim())}`)
  }
  return (
    <form className="form inline card" onSubmit={submit} aria-label="Open an account">
      <label>User ID<input name="open-user-id" required maxLength={200} value={userId} onChange={(e) => setUserId(e.target.value)} /></label>
      <button type="submit" className="secondary">Open account</button>
    </form>
  )
}

const RecoveryCard = () => {
  const recovery = useRecovery()
  if (recovery.isPending) return <Loading what="the recovery designation" />
  if (isFailure(recovery.error, 404)) return <p className="card muted" data-recovery="none">No recovery account is designated.</p>
  if (recovery.isError) return <ErrorState error={recovery.error} retry={() => void recovery.refetch()} />
  const { userId, principalId, methodId } = recovery.data
  return (
    <div className="card" data-recovery={userId}>
      <h2>Recovery account</h2>
      <dl className="fields">
        <dt>User</dt><dd className="mono"><Link to={`/admin/accounts/${encodeURIComponent(userId)}`}>{userId}</Link></dd>
        <dt>Principal</dt><dd className="mono">{principalId}</dd>
        <dt>Password method</dt><dd className="mono">{methodId}</dd>
      </dl>
      <p className="muted">To move it, open another enrolled administrator account and make it the recovery account.</p>
    </div>
  )
}

export const AccountsPage = () => {
  const can = useInstallationPermissions()
  return (
    <section>
      <h1>Accounts</h1>
      {can.pending ? <Loading what="your permissions" /> : !can("installation:administer") ? <Denied what="accounts" /> : (
        <>
          <RecoveryCard />
          <OpenAccount />
          <CreateAccount />
        </>
      )}
    </section>
  )
}
