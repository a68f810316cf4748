/**
 * Service accounts (SPEC 2.11, 4.5): list, read, create, issue the provider credential, set a
 * native `api_key` reference, delete. Answers carry metadata and credential readiness only:
 * never a token or a Secret value.
 */
import { CreateServiceAccount, IssueCredential, type ServiceAccount, SetNativeCredential } from "@svc/core/api"
import { useMutation, useQuery } from "@tanstack/react-query"
import { call } from "../client.js"
import type { NamespaceId } from "../ids.js"
import { queryClient } from "../queryClient.js"
import { checked } from "./checked.js"
import type { ServiceAccountId } from "./ids.js"
import { resourceKeys } from "./keys.js"

const inNs = (ns: string) => ({ namespaceId: ns as NamespaceId })
const at = (ns: string, id: string) => ({ namespaceId: ns as NamespaceId, serviceAccountId: id as ServiceAccountId })

/** A changed account is shown at once on its page, and the list reads it again. */
const saved = (ns: string) => (account: ServiceAccount) => {
  queryClient.setQueryData(resourceKeys.serviceAccount(ns, account.id), account)
  return queryClient.invalidateQueries({ queryKey: resourceKeys.serviceAccounts(ns), exact: true })
}

export const useServiceAccountList = (ns: string) =>
  useQuery({
    queryKey: resourceKeys.serviceAccounts(ns),
    queryFn: () => call((c) => c.serviceAccounts.list({ path: inNs(ns), urlParams: {} }))
  })

export const useServiceAccount = (ns: string, id: string) =>
  useQuery({ queryKey: resourceKeys.serviceAccount(ns, id), queryFn: () => call((c) => c.serviceAccounts.get({ path: at(ns, id) })) })

export const useCreateServiceAccount = (ns: string) =>
  useMutation({
    mutationFn: (name: string) => {
      const payload = checked(CreateServiceAccount, { name })
      return call((c) => c.serviceAccounts.create({ path: inNs(ns), payload }))
    },
    onSuccess: saved(ns)
  })

/** `POST .../credentials` with `{}`: the Driver decides what it issues; 409 the second time. */
export const useIssueCredential = (ns: string, id: string) =>
  useMutation({
    mutationFn: () => {
      const payload = checked(IssueCredential, {})
      return call((c) => c.serviceAccounts.issueCredential({ path: at(ns, id), payload }))
    },
    onSuccess: saved(ns)
  })

/** `PATCH .../credential`: a native account's `api_key`, named by Secret name and key. */
export const useSetNativeCredential = (ns: string, id: string) =>
  useMutation({
    mutationFn: (secretRef: { readonly name: string; readonly key: string }) => {
      const payload = checked(SetNativeCredential, { kind: "api_key", secretRef })
      return call((c) => c.serviceAccounts.setCredential({ path: at(ns, id), payload }))
    },
    onSuccess: saved(ns)
  })

export const useDeleteServiceAccount = (ns: string) =>
  useMutation({
    mutationFn: (id: string) => call((c) => c.serviceAccounts.delete({ path: at(ns, id) })),
    onSuccess: (_, id) => {
      queryClient.removeQueries({ queryKey: resourceKeys.serviceAccount(ns, id) })
      return queryClient.invalidateQueries({ queryKey: resourceKeys.serviceAccounts(ns), exact: true })
    }
  })
