/** Configurations (SPEC 2.8, 4.3): read, create, replace values, delete (the list: `../configurations.js`). */
import { CreateConfiguration, UpdateConfiguration } from "@svc/core/api"
import { useMutation, useQuery } from "@tanstack/react-query"
import { call } from "../client.js"
import type { ConfigurationId, NamespaceId } from "../ids.js"
import { keys } from "../keys.js"
import { queryClient } from "../queryClient.js"
import { checked } from "./checked.js"
import { resourceKeys } from "./keys.js"

const inNs = (ns: string) => ({ namespaceId: ns as NamespaceId })
const at = (ns: string, id: string) => ({ namespaceId: ns as NamespaceId, configurationId: id as ConfigurationId })

export const useConfiguration = (ns: string, id: string) =>
  useQuery({ queryKey: resourceKeys.configuration(ns, id), queryFn: () => call((c) => c.configurations.get({ path: at(ns, id) })) })

/** The editor's document: `{ values, secretBindings? }` as one JSON object. */
export interface ConfigurationDocument {
  readonly values: unknown
  readonly secretBindings?: unknown
}

export const useCreateConfigurationDocument = (ns: string) =>
  useMutation({
    mutationFn: (document: ConfigurationDocument) => {
      const payload = checked(CreateConfiguration, { kind: "agent", ...document })
      return call((c) => c.configurations.create({ path: inNs(ns), payload }))
    },
    onSuccess: () => queryClient.invalidateQueries({ queryKey: keys.configurations(ns) })
  })

export const useUpdateConfiguration = (ns: string, id: string) =>
  useMutation({
    mutationFn: (document: ConfigurationDocument) => {
      const payload = checked(UpdateConfiguration, document)
      return call((c) => c.configurations.update({ path: at(ns, id), payload }))
    },
    onSuccess: (updated) => {
      queryClient.setQueryData(resourceKeys.configuration(ns, id), updated)
      return queryClient.invalidateQueries({ queryKey: keys.configurations(ns), exact: true })
    }
  })

export const useDeleteConfiguration = (ns: string) =>
  useMutation({
    mutationFn: (id: string) => call((c) => c.configurations.delete({ path: at(ns, id) })),
    onSuccess: (_, id) => {
      queryClient.removeQueries({ queryKey: resourceKeys.configuration(ns, id) })
      return queryClient.invalidateQueries({ queryKey: keys.configurations(ns), exact: true })
    }
  })
