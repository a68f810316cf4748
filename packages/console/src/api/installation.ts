/**
 * The Installation's capabilities (execution modes, plugin policies) that shape the Agent form,
 * and the console's own settings the API serves beside it (native admin hosts).
 */
import { useQuery } from "@tanstack/react-query"
import { call } from "./client.js"
import { keys } from "./keys.js"

export const useInstallation = () =>
  useQuery({ queryKey: keys.installation, queryFn: () => call((c) => c.installation.get()), staleTime: 60_000 })

export interface ConsoleSettings {
  /** Agent hosts are `<agent id without agt_>.<suffix>` when native admin is enabled. */
  readonly nativeAdmin: { readonly agentHostSuffix: string } | null
}

export const useConsoleSettings = () =>
  useQuery({
    queryKey: ["console-settings"],
    queryFn: async (): Promise<ConsoleSettings> => {
      const response = await fetch("/console/settings.json", { credentials: "same-origin" })
      return response.ok ? await response.json() as ConsoleSettings : { nativeAdmin: null }
    },
    staleTime: Infinity
  })

/** Backends need Installation `administer`; a 403 simply leaves the field out of the form. */
export const useBackends = () =>
  useQuery({ queryKey: ["backends"], queryFn: () => call((c) => c.installation.backends()), staleTime: 60_000 })
