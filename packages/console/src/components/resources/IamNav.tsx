/** The IAM pages of one Namespace, side by side. */
import { NavLink } from "react-router"

export const IamNav = ({ ns }: { ns: string }) => (
  <nav className="subnav" aria-label="IAM">
    <NavLink to={`/ns/${ns}/iam/roles`}>Roles</NavLink>
    <NavLink to={`/ns/${ns}/iam/access-bindings`}>Access bindings</NavLink>
    <NavLink to={`/ns/${ns}/iam/service-principals`}>Service principals</NavLink>
  </nav>
)
