/**
 * Installation administration (SPEC 4.1, 5.5, 5.7): service keys, human accounts and the
 * recovery designation (the Installation and its Backends are read with `../installation.js`). An account state change carries
 * the `version` of the account read it was decided on as `expectedVersion`.
 */
import { CreateAccountBody, IssueServiceKeyRequest, MoveRecoveryBody } from "@svc/core/api"
import { useMutation, useQuery } from "@tanstack/react-query"
import { call } from "../client.js"
import { queryClient } from "../queryClient.js"
import { checked } from "./checked.js"
import { resourceKeys } from "./keys.js"

/**
 * The issued key is the mutation's answer: gcTime 0 and the page's `reset()` drop it from the
 * mutation cache, so it lives only in the page that shows it, and goes with it on navigation.
 */
export const useIssueServiceKey = () =>
  useMutation({
    gcTime: 0,
    mutationFn: (body: { servicePrincipalId: string; name: string; namespaceId?: string; expiresIn?: number }) => {
      const payload = checked(IssueServiceKeyRequest, body)
      return call((c) => c.serviceKeys.issue({ payload }))
    }
  })

export const useRevokeServiceKey = () =>
  useMutation({ mutationFn: (keyId: string) => call((c) => c.serviceKeys.revoke({ path: { keyId } })) })

export const useAccount = (userId: string) =>
  useQuery({ queryKey: resourceKeys.account(userId), queryFn: () => call((c) => c.authAccounts.readAccount({ path: { userId } })) })

// The password is never kept: gcTime 0 drops the settled mutation and its variables.
export const useCreateAccount = () =>
  useMutation({
    gcTime: 0,
    mutationFn: (body: { email: string; password: string; name?: string; roleId?: string }) => {
      const payload = checked(CreateAccountBody, body)
      return call((c) => c.authAccounts.createAccount({ payload }))
    }
  })

export type AccountChange = "disable" | "enable" | "revoke"

export const useChangeAccount = (userId: string) =>
  useMutation({
    mutationFn: ({ change, expectedVersion }: { change: AccountChange; expectedVersion: number }) =>
      call((c) => {
        const request = { path: { userId }, payload: { expectedVersion } }
        return change === "disable"
          ? c.authAccounts.disableAccount(request)
          : change === "enable" ? c.authAccounts.enableAccount(request) : c.authAccounts.revokeAccount(request)
      }),
    // Whatever the answer (a 409 means the read was stale), the page shows a fresh read.
    onSettled: () => queryClient.invalidateQueries({ queryKey: resourceKeys.account(userId) })
  })

export const useRecovery = () =>
  useQuery({ queryKey: resourceKeys.recovery, queryFn: () => call((c) => c.authAccounts.readRecovery()) })

export const useMoveRecovery = () =>
  useMutation({
    mutationFn: (body: { expectedCurrentUserId: string; expectedVersion: number; userId: string }) => {
      const payload = checked(MoveRecoveryBody, body)
      return call((c) => c.authAccounts.moveRecovery({ payload }))
    },
    onSettled: () => queryClient.invalidateQueries({ queryKey: resourceKeys.recovery })
  })
