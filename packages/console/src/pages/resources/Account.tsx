/**
 * One account: its state from a guarded read, and disable, enable, revoke and "make recovery
 * account", each sent with the read's `version` as `expectedVersion` (SPEC 4.1). A 409 means the
 * account changed since: the page reads it again and the person decides anew.
 */
import type { AccountState as AccountStateSchema } from "@svc/core/api"

type AccountState = typeof AccountStateSchema.Type
import { useParams } from "react-router"
import { useInstallationPermissions } from "../../api/permissions.js"
import { type AccountChange, useAccount, useChangeAccount, useMoveRecovery, useRecovery } from "../../api/resources/admin.js"
import { Problems } from "../../components/resources/Problems.js"
import { Denied, Loading, QueryView } from "../../components/States.js"
import "./resources.css"

const CHANGES: ReadonlyArray<{ change: AccountChange; label: string; offered: (state: AccountState) => boolean }> = [
  { change: "disable", label: "Disable", offered: (state) => !state.disabled },
  { change: "enable", label: "Enable", offered: (state) => state.disabled },
  { change: "revoke", label: "Revoke for good", offered: () => true }
]

const Actions = ({ state }: { state: AccountState }) => {
  const change = useChangeAccount(state.userId)
  const recovery = useRecovery()
  const move = useMoveRecovery()
  const current = recovery.data?.userId
  const act = (next: AccountChange, label: string) =>
    window.confirm(`${label} account ${state.userId}?`) && change.mutate({ change: next, expectedVersion: state.version })
  return (
    <>
      <div className="actions">
        {CHANGES.filter((c) => c.offered(state)).map((c) => (
          <button key={c.change} type="button" className={c.change === "enable" ? "secondary" : "danger"} disabled={change.isPending} onClick={() => act(c.change, c.label)}>
            {c.label}
          </button>
        ))}
        {current !== undefined && current !== state.userId && !state.disabled && (
          <button
            type="button"
            className="secondary"
            disabled={move.isPending}
            onClick={() => move.mutate({ expectedCurrentUserId: current, expectedVersion: state.version, userId: state.userId })}
          >
            Make recovery account
          </button>
        )}
        {current === state.userId && <span className="badge" data-recovery-holder>recovery account</span>}
      </div>
      {change.isSuccess && <p role="status">Done.</p>}
      <Problems error={change.error ?? move.error} />
    </>
  )
}

const AccountDetail = ({ userId }: { userId: string }) => {
  const account = useAccount(userId)
  return (
    <QueryView query={account} what="This account">
      {(state) => (
        <>
          <dl className="fields card">
            <dt>User ID</dt><dd className="mono">{state.userId}</dd>
            <dt>Principal</dt><dd className="mono">{state.principalId}</dd>
            <dt>Status</dt><dd data-field="disabled">{state.disabled ? "disabled" : "enabled"}</dd>
            <dt>Version</dt><dd data-field="version">{state.version}</dd>
            <dt>Sign-in methods</dt>
            <dd>{state.methods.map((m) => <div key={m.methodId} className="mono">{m.providerId} {m.subject}</div>)}</dd>
          </dl>
          <Actions state={state} />
        </>
      )}
    </QueryView>
  )
}

export const AccountPage = () => {
  const { userId = "" } = useParams()
  const can = useInstallationPermissions()
  return (
    <section>
      <h1>Account</h1>
      {can.pending ? <Loading what="your permissions" /> : !can("installation:administer") ? <Denied what="accounts" /> : <AccountDetail key={userId} userId={userId} />}
    </section>
  )
}

