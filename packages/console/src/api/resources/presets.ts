/** Presets (DESIGN §7): list, read, create from a JSON template, delete. */
import { CreatePreset } from "@svc/core/api"
import { useMutation, useQuery } from "@tanstack/react-query"
import { call } from "../client.js"
import type { NamespaceId } from "../ids.js"
import { queryClient } from "../queryClient.js"
import { checked } from "./checked.js"
import type { PresetId } from "./ids.js"
import { resourceKeys } from "./keys.js"

const inNs = (ns: string) => ({ namespaceId: ns as NamespaceId })
const at = (ns: string, id: string) => ({ namespaceId: ns as NamespaceId, presetId: id as PresetId })

export const usePresetList = (ns: string) =>
  useQuery({ queryKey: resourceKeys.presets(ns), queryFn: () => call((c) => c.presets.list({ path: inNs(ns), urlParams: {} })) })

export const usePreset = (ns: string, id: string) =>
  useQuery({ queryKey: resourceKeys.preset(ns, id), queryFn: () => call((c) => c.presets.get({ path: at(ns, id) })) })

export const useCreatePreset = (ns: string) =>
  useMutation({
    mutationFn: (body: { readonly name: string; readonly template: unknown }) => {
      const payload = checked(CreatePreset, body)
      return call((c) => c.presets.create({ path: inNs(ns), payload }))
    },
    onSuccess: () => queryClient.invalidateQueries({ queryKey: resourceKeys.presets(ns) })
  })

export const useDeletePreset = (ns: string) =>
  useMutation({
    mutationFn: (id: string) => call((c) => c.presets.delete({ path: at(ns, id) })),
    onSuccess: (_, id) => {
      queryClient.removeQueries({ queryKey: resourceKeys.preset(ns, id) })
      return queryClient.invalidateQueries({ queryKey: resourceKeys.presets(ns), exact: true })
    }
  })
