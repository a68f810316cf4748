/**
 * Service API keys (SPEC 5.5): issue for a service principal, and revoke by key ID. The service
 * has no key list (5.5.3). An issued key is shown once, in this page's own state only: it is
 * gone on navigation, and nothing (cache, storage, URL) keeps it.
 */
import { type FormEvent, useState } from "react"
import { useSearchParams } from "react-router"
import { useInstallationPermissions } from "../../api/permissions.js"
import { useIssueServiceKey, useRevokeServiceKey } from "../../api/resources/admin.js"
import { Problems } from "../../components/resources/Problems.js"
import { When } from "../../components/resources/When.js"
import { Denied, Loading } from "../../components/States.js"
import "./resources.css"

interface Issued {
  readonly id: string
  readonly name: string
  readonly servicePrincipalId: string
  readonly expiresAt: Date
  readonly key: string
}

const ShownOnce = ({ issued, onDone }: { issued: Issued; onDone: () => void }) => {
  const [copied, setCopied] = useState<"no" | "yes" | "failed">("no")
  const copy = () => navigator.clipboard.writeText(issued.key).then(() => setCopied("yes"), () => setCopied("failed"))
  return (
    <div className="card once" role="region" aria-label="Issued key">
      <h2>Key {issued.name} issued</h2>
      <p>Copy it now: it is shown only once and cannot be retrieved again.</p>
      <code className="secret" data-issued-key>{issued.key}</code>
      <dl className="fields">
        <dt>Key ID (to revoke)</dt><dd className="mono" data-key-id>{issued.id}</dd>
        <dt>Service principal</dt><dd className="mono">{issued.servicePrincipalId}</dd>
        <dt>Expires</dt><dd><When at={issued.expiresAt} /></dd>
      </dl>
      <div className="actions">
        <button type="button" onClick={() => void copy()}>Copy key</button>
        <button type="button" className="secondary" onClick={onDone}>Done, hide it</button>
        {copied === "yes" && <span role="status">Copied.</span>}
        {copied === "failed" && <span role="status">Copying is not allowed here; select the key and copy it.</span>}
      </div>
    </div>
  )
}

const IssueKey = ({ onIssued }: { onIssued: (issued: Issued) => void }) => {
  const [params] = useSearchParams()
  const issue = useIssueServiceKey()
  const [principal, setPrincipal] = useState(params.get("principal") ?? "")
  const [namespaceId, setNamespaceId] = useState(params.get("ns") ?? "")
  const [name, setName] = useState("")
  const [days, setDays] = useState("30")
  const submit = (event: FormEvent) => {
    event.preventDefault()
    const body = {
      servicePrincipalId: principal,
      name,
      ...(namespaceId === "" ? {} : { namespaceId }),
      expiresIn: Math.round(Number(days) * 86_400)
    }
    // The answer goes to this page's state; the mutation forgets it at once.
    issue.mutate(body, { onSuccess: (issued) => { onIssued(issued); issue.reset() } })
  }
  return (
    <form className="form card" onSubmit={submit} aria-label="Issue a service key">
      <h2>Issue a key</h2>
      <label>Service principal ID<input name="key-principal" required value={principal} onChange={(e) => setPrincipal(e.target.value)} /></label>
      <label>Namespace ID (only for a Namespace service principal)<input name="key-namespace" value={namespaceId} onChange={(e) => setNamespaceId(e.target.value)} /></label>
      <label>Name<input name="key-name" required maxLength={32} value={name} onChange={(e) => setName(e.target.value)} /></label>
      <label>Lifetime in days (1-365)<input name="key-days" type="number" min={1} max={365} required value={days} onChange={(e) => setDays(e.target.value)} /></label>
      <div className="actions"><button type="submit" disabled={issue.isPending}>Issue key</button></div>
      <Problems error={issue.error} />
    </form>
  )
}

const RevokeKey = ({ initial }: { initial: string }) => {
  const revoke = useRevokeServiceKey()
  const [keyId, setKeyId] = useState(initial)
  const submit = (event: FormEvent) => {
    event.preventDefault()
    if (window.confirm(`Revoke key ${keyId}? Requests with it will be refused.`)) revoke.mutate(keyId)
  }
  return (
    <form className="form inline card" onSubmit={submit} aria-label="Revoke a service key">
      <label>Key ID<input name="revoke-key-id" required maxLength={200} value={keyId} onChange={(e) => setKeyId(e.target.value)} /></label>
      <button type="submit" className="danger" disabled={revoke.isPending}>Revoke key</button>
      {revoke.isSuccess && <span role="status" data-revoked={revoke.data.id}>Key {revoke.data.id} revoked.</span>}
      <Problems error={revoke.error} />
    </form>
  )
}

export const ServiceKeysPage = () => {
  const can = useInstallationPermissions()
  const [issued, setIssued] = useState<Issued | null>(null)
  const [lastId, setLastId] = useState("")
  return (
    <section>
      <h1>Service keys</h1>
      <p className="muted">Keys are issued for a service principal; the service keeps no list of them. Keep the key ID to revoke it.</p>
      {can.pending ? <Loading what="your permissions" /> : !can("installation:administer") ? <Denied what="service keys" /> : (
        <>
          {issued !== null && <ShownOnce issued={issued} onDone={() => setIssued(null)} />}
          <IssueKey onIssued={(next) => { setIssued(next); setLastId(next.id) }} />
          <RevokeKey key={lastId} initial={lastId} />
        </>
      )}
    </section>
  )
}
