/**
 * The frame of a page about one Namespace of the URL: a malformed ID is "not found", and the
 * body is keyed by the Namespace, so switching remounts it and nothing of the previous
 * Namespace (form state, data) survives. `RequirePermission` shows its children only when the
 * permission probe says the caller holds the permission.
 */
import { Fragment, type ReactNode } from "react"
import { useParams } from "react-router"
import { isNamespaceId } from "../api/ids.js"
import { useNamespacePermissions } from "../api/permissions.js"
import { Denied, Loading, NotFound } from "./States.js"

export const NamespacePage = ({ title, children }: { title?: string; children: (ns: string) => ReactNode }) => {
  const { ns = "" } = useParams()
  return (
    <section>
      {title !== undefined && <h1>{title}</h1>}
      {isNamespaceId(ns) ? <Fragment key={ns}>{children(ns)}</Fragment> : <NotFound what="This Namespace" />}
    </section>
  )
}

export const RequirePermission = ({ ns, permission, what, children }: {
  ns: string
  permission: string
  what: string
  children: ReactNode
}) => {
  const can = useNamespacePermissions(ns)
  if (can.pending) return <Loading what="your permissions" />
  return can(permission) ? <>{children}</> : <Denied what={what} />
}
