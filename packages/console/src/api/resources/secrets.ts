/**
 * Secrets: create, replace the value, delete (the list is `../secrets.js`). The value is
 * write-only: it is taken from its input at the moment of sending (`takeValue` empties the
 * field), so it is never a mutation's variables, never in any cache, and nothing the service
 * answers carries it.
 */
import { CreateSecret, UpdateSecret } from "@svc/core/api"
import { useMutation } from "@tanstack/react-query"
import { call } from "../client.js"
import type { NamespaceId } from "../ids.js"
import { keys } from "../keys.js"
import { queryClient } from "../queryClient.js"
import { checked } from "./checked.js"
import type { SecretId } from "./ids.js"

/** Reads the value once and clears where it was typed. */
export type TakeValue = () => string

const inNs = (ns: string) => ({ namespaceId: ns as NamespaceId })
const at = (ns: string, id: string) => ({ namespaceId: ns as NamespaceId, secretId: id as SecretId })
const refresh = (ns: string) => queryClient.invalidateQueries({ queryKey: keys.secrets(ns) })

// gcTime 0: a settled write leaves nothing behind in the mutation cache either.
export const useCreateSecretWithValue = (ns: string, takeValue: TakeValue) =>
  useMutation({
    gcTime: 0,
    mutationFn: (name: string) => {
      const payload = checked(CreateSecret, { name, value: takeValue() })
      return call((c) => c.secrets.create({ path: inNs(ns), payload }))
    },
    onSuccess: () => refresh(ns)
  })

export const useReplaceSecretValue = (ns: string, id: string, takeValue: TakeValue) =>
  useMutation({
    gcTime: 0,
    mutationFn: () => {
      const payload = checked(UpdateSecret, { value: takeValue() })
      return call((c) => c.secrets.update({ path: at(ns, id), payload }))
    },
    onSuccess: () => refresh(ns)
  })

export const useDeleteSecret = (ns: string) =>
  useMutation({
    mutationFn: (id: string) => call((c) => c.secrets.delete({ path: at(ns, id) })),
    onSuccess: () => refresh(ns)
  })
