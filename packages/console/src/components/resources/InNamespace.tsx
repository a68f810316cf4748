/**
 * The frame of a resource page about the Namespace in the URL: a malformed ID is "not found",
 * and the body is keyed by the Namespace, so switching remounts it and nothing typed or read
 * for the previous Namespace survives.
 */
import { Fragment, type ReactNode } from "react"
import { useParams } from "react-router"
import { isNamespaceId } from "../../api/ids.js"
import { NotFound } from "../States.js"

export const InNamespace = ({ title, children }: { title: string; children: (ns: string) => ReactNode }) => {
  const { ns = "" } = useParams()
  return (
    <section>
      <h1>{title}</h1>
      {isNamespaceId(ns) ? <Fragment key={ns}>{children(ns)}</Fragment> : <NotFound what="This Namespace" />}
    </section>
  )
}
