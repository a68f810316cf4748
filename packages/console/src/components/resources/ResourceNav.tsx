/**
 * The resource pages' links in the Shell's navigation: a Namespace's resources when one is in
 * the URL, and Installation administration when the probe says the caller may read it.
 */
import { NavLink } from "react-router"
import { useInstallationPermissions } from "../../api/permissions.js"

export const ResourceNav = ({ ns }: { ns: string | undefined }) => {
  const can = useInstallationPermissions()
  return (
    <>
      {ns !== undefined && (
        <>
          <NavLink to={`/ns/${ns}/configurations`}>Configurations</NavLink>
          <NavLink to={`/ns/${ns}/presets`}>Presets</NavLink>
          <NavLink to={`/ns/${ns}/secrets`}>Secrets</NavLink>
          <NavLink to={`/ns/${ns}/service-accounts`}>Service accounts</NavLink>
          <NavLink to={`/ns/${ns}/credential-sources`}>Credential sources</NavLink>
          <NavLink to={`/ns/${ns}/iam/roles`}>IAM</NavLink>
        </>
      )}
      {can("installation:read") && <NavLink to="/admin/installation">Installation</NavLink>}
      {can("installation:administer") && (
        <>
          <NavLink to="/admin/backends">Backends</NavLink>
          <NavLink to="/admin/service-principals">Service principals</NavLink>
          <NavLink to="/admin/service-keys">Service keys</NavLink>
          <NavLink to="/admin/accounts">Accounts</NavLink>
        </>
      )}
    </>
  )
}
