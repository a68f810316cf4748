/**
 * Credential sources (SPEC 2.10, 4.6): list, read (with the gateway's live `status`), create,
 * delete; there is no update. A source names its Secrets by reference: nothing sent or answered
 * here carries a Secret's value.
 */
import { CreateCredentialSource } from "@svc/core/api"
import { useMutation, useQuery } from "@tanstack/react-query"
import { call } from "../client.js"
import type { NamespaceId } from "../ids.js"
import { queryClient } from "../queryClient.js"
import { checked } from "./checked.js"
import type { CredentialSourceId } from "./ids.js"
import { resourceKeys } from "./keys.js"

const inNs = (ns: string) => ({ namespaceId: ns as NamespaceId })
const at = (ns: string, id: string) => ({ namespaceId: ns as NamespaceId, credentialSourceId: id as CredentialSourceId })

/** What the create form gathers: `secrets` maps a field name to a Secret ID of this Namespace. */
export interface NewCredentialSource {
  readonly name: string
  readonly type: string
  readonly config: Readonly<Record<string, string>>
  readonly secrets: Readonly<Record<string, string>>
}

const bodyOf = (ns: string, source: NewCredentialSource) => ({
  name: source.name,
  type: source.type,
  config: source.config,
  secrets: Object.fromEntries(Object.entries(source.secrets).map(([field, id]) => [field, { kind: "secret", namespaceId: ns, id }]))
})

export const useCredentialSourceList = (ns: string) =>
  useQuery({
    queryKey: resourceKeys.credentialSources(ns),
    queryFn: () => call((c) => c.credentialSources.list({ path: inNs(ns), urlParams: {} }))
  })

/** The single read asks the Credential Gateway, so its `status` is live. */
export const useCredentialSource = (ns: string, id: string) =>
  useQuery({ queryKey: resourceKeys.credentialSource(ns, id), queryFn: () => call((c) => c.credentialSources.get({ path: at(ns, id) })) })

export const useCreateCredentialSource = (ns: string) =>
  useMutation({
    mutationFn: (source: NewCredentialSource) => {
      const payload = checked(CreateCredentialSource, bodyOf(ns, source))
      return call((c) => c.credentialSources.create({ path: inNs(ns), payload }))
    },
    onSuccess: (source) => {
      queryClient.setQueryData(resourceKeys.credentialSource(ns, source.id), source)
      return queryClient.invalidateQueries({ queryKey: resourceKeys.credentialSources(ns), exact: true })
    }
  })

export const useDeleteCredentialSource = (ns: string) =>
  useMutation({
    mutationFn: (id: string) => call((c) => c.credentialSources.delete({ path: at(ns, id) })),
    onSuccess: (_, id) => {
      queryClient.removeQueries({ queryKey: resourceKeys.credentialSource(ns, id) })
      return queryClient.invalidateQueries({ queryKey: resourceKeys.credentialSources(ns), exact: true })
    }
  })
