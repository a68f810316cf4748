/**
 * The signed-in frame: header with the Namespace switcher, navigation and sign-out. The current
 * Namespace is only ever the one in the URL (`/ns/<ns>/...`), so links, reloads and the back
 * button agree with what is shown.
 */
import { Link, Navigate, NavLink, Outlet, useLocation, useNavigate, useParams } from "react-router"
import { useNamespaces } from "../api/namespaces.js"
import { useSession, useSignOut } from "../api/session.js"
import { ResourceNav } from "./resources/ResourceNav.js"
import { ErrorState, Loading } from "./States.js"

const NamespaceSwitcher = ({ current }: { current: string | undefined }) => {
  const namespaces = useNamespaces()
  const navigate = useNavigate()
  if (namespaces.isError) return null
  return (
    <label className="switcher">
      <span>Namespace</span>
      <select
        aria-label="Namespace"
        value={current ?? ""}
        onChange={(event) => event.target.value !== "" && navigate(`/ns/${event.target.value}/agents`)}
      >
        <option value="">{namespaces.isPending ? "loading…" : "choose…"}</option>
        {namespaces.data?.map((namespace) => (
          <option key={namespace.id} value={namespace.id}>{namespace.name}</option>
        ))}
      </select>
    </label>
  )
}

export const Shell = () => {
  const session = useSession()
  const signOut = useSignOut()
  const navigate = useNavigate()
  const location = useLocation()
  const { ns } = useParams()
  if (session.isPending) return <Loading what="your session" />
  if (session.isError) return <ErrorState error={session.error} retry={() => void session.refetch()} />
  if (session.data === null) {
    return <Navigate to={`/sign-in?next=${encodeURIComponent(location.pathname)}`} replace />
  }
  return (
    <div className="shell">
      <header className="topbar">
        <Link to="/namespaces" className="brand">svc console</Link>
        <NamespaceSwitcher current={ns} />
        <nav aria-label="Main">
          <NavLink to="/namespaces" end>Namespaces</NavLink>
          {ns !== undefined && <NavLink to={`/ns/${ns}/agents`}>Agents</NavLink>}
          <ResourceNav ns={ns} />
        </nav>
        <span className="who" title={session.data.email}>{session.data.name || session.data.email}</span>
        <button
          type="button"
          className="secondary"
          disabled={signOut.isPending}
          onClick={() => signOut.mutate(undefined, { onSettled: () => navigate("/sign-in", { replace: true }) })}
        >
          Sign out
        </button>
      </header>
      <main className="content">
        <Outlet />
      </main>
    </div>
  )
}
