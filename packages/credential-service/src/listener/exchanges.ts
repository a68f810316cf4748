/** Concurrent exchanges (SPEC 8): at most 32 in total and 4 per session. */
import { CredentialServiceLimits as L } from "@svc/core/schema"

export interface ExchangeSlots {
  /** A release function, or undefined when a limit is reached. */
  readonly acquire: (sessionId: string) => (() => void) | undefined
}

export const makeExchangeSlots = (): ExchangeSlots => {
  let total = 0
  const perSession = new Map<string, number>()
  return {
    acquire: (sessionId) => {
      const mine = perSession.get(sessionId) ?? 0
      if (total >= L.exchangesTotal || mine >= L.exchangesPerSession) return undefined
      total++
      perSession.set(sessionId, mine + 1)
      let released = false
      return () => {
        if (released) return
        released = true
        total--
        const left = (perSession.get(sessionId) ?? 1) - 1
        if (left === 0) perSession.delete(sessionId)
        else perSession.set(sessionId, left)
      }
    }
  }
}
