/**
 * IAM (SPEC 4.7, DESIGN §6): a Namespace's Roles and AccessBindings, and service principals of
 * the Installation or of one Namespace. Roles and bindings are immutable: create and delete only.
 */
import { CreateBinding, CreateRole, CreateServicePrincipal } from "@svc/core/api"
import { useMutation, useQuery } from "@tanstack/react-query"
import { call } from "../client.js"
import type { NamespaceId } from "../ids.js"
import { queryClient } from "../queryClient.js"
import { checked } from "./checked.js"
import type { BindingId, RoleId, ServicePrincipalId } from "./ids.js"
import { resourceKeys } from "./keys.js"

const inNs = (ns: string) => ({ namespaceId: ns as NamespaceId })

/** A create and a delete that refresh one list. */
const useWrites = <C, D>(key: ReadonlyArray<string>, create: (body: C) => Promise<unknown>, remove: (id: D) => Promise<unknown>) => {
  const refresh = () => queryClient.invalidateQueries({ queryKey: key })
  return {
    create: useMutation({ mutationFn: create, onSuccess: refresh }),
    remove: useMutation({ mutationFn: remove, onSuccess: refresh })
  }
}

export const useRoles = (ns: string) =>
  useQuery({ queryKey: resourceKeys.roles(ns), queryFn: () => call((c) => c.iamRoles.list({ path: inNs(ns), urlParams: {} })) })

export const useRoleWrites = (ns: string) =>
  useWrites(
    resourceKeys.roles(ns),
    (body: { readonly name: string; readonly permissions: ReadonlyArray<string> }) => {
      const payload = checked(CreateRole, body)
      return call((c) => c.iamRoles.create({ path: inNs(ns), payload }))
    },
    (roleId: string) => call((c) => c.iamRoles.delete({ path: { ...inNs(ns), roleId: roleId as RoleId } }))
  )

export const useBindings = (ns: string) =>
  useQuery({
    queryKey: resourceKeys.bindings(ns),
    queryFn: () => call((c) => c.iamAccessBindings.list({ path: inNs(ns), urlParams: {} }))
  })

export interface BindingDraft {
  readonly principalId: string
  readonly roleId: string
  readonly resource: { readonly kind: string; readonly id: string }
}

export const useBindingWrites = (ns: string) =>
  useWrites(
    resourceKeys.bindings(ns),
    (body: BindingDraft) => {
      const payload = checked(CreateBinding, body)
      return call((c) => c.iamAccessBindings.create({ path: inNs(ns), payload }))
    },
    (bindingId: string) => call((c) => c.iamAccessBindings.delete({ path: { ...inNs(ns), bindingId: bindingId as BindingId } }))
  )

/** `ns` undefined: the Installation's service principals. */
export const useServicePrincipals = (ns: string | undefined) =>
  useQuery({
    queryKey: ns === undefined ? resourceKeys.installationPrincipals : resourceKeys.namespacePrincipals(ns),
    queryFn: () =>
      call((c) => ns === undefined
        ? c.iamServicePrincipals.listInstallation({ urlParams: {} })
        : c.iamServicePrincipals.listNamespace({ path: inNs(ns), urlParams: {} }))
  })

export const useServicePrincipalWrites = (ns: string | undefined) =>
  useWrites(
    ns === undefined ? resourceKeys.installationPrincipals : resourceKeys.namespacePrincipals(ns),
    (name: string) => {
      const payload = checked(CreateServicePrincipal, { name })
      return call((c) => ns === undefined
        ? c.iamServicePrincipals.createInstallation({ payload })
        : c.iamServicePrincipals.createNamespace({ path: inNs(ns), payload }))
    },
    (id: string) => {
      const servicePrincipalId = id as ServicePrincipalId
      return call((c) => ns === undefined
        ? c.iamServicePrincipals.deleteInstallation({ path: { servicePrincipalId } })
        : c.iamServicePrincipals.deleteNamespace({ path: { ...inNs(ns), servicePrincipalId } }))
    }
  )
