/** Namespaces (SPEC 4.2): list with live status while work is under way, create, delete. */
import { useMutation, useQuery } from "@tanstack/react-query"
import { call } from "./client.js"
import type { NamespaceId } from "./ids.js"
import { keys } from "./keys.js"
import { queryClient } from "./queryClient.js"

const busy = (status: string) => status === "provisioning" || status === "deleting"

export const useNamespaces = () =>
  useQuery({
    queryKey: keys.namespaces,
    queryFn: () => call((c) => c.namespaces.list({ urlParams: {} })),
    // The worker provisions and tears down in the background: refetch until it settles.
    refetchInterval: (query) => query.state.data?.some((namespace) => busy(namespace.status)) === true ? 1_000 : false
  })

export const useNamespace = (ns: string) =>
  useQuery({
    queryKey: keys.namespace(ns),
    queryFn: () => call((c) => c.namespaces.get({ path: { namespaceId: ns as NamespaceId } })),
    refetchInterval: (query) => query.state.data !== undefined && busy(query.state.data.status) ? 1_000 : false
  })

export const useCreateNamespace = () =>
  useMutation({
    mutationFn: (name: string) => call((c) => c.namespaces.create({ payload: { name } })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: keys.namespaces })
  })

export const useDeleteNamespace = () =>
  useMutation({
    mutationFn: (ns: string) => call((c) => c.namespaces.delete({ path: { namespaceId: ns as NamespaceId } })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: keys.namespaces })
  })
