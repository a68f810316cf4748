/**
 * A token ledger kept in memory, for token-cache tests that run without a session store: every
 * session is active, and what the cache records is kept for the test to read.
 */
import { Effect } from "effect"
import type { TokenLedger } from "../../src/upstream/tokenCache.js"

export interface NotedToken {
  readonly sessionId: string
  readonly tokenId: string
  readonly expiresAtMs: number
}

export const memoryLedger = () => {
  const noted: Array<NotedToken> = []
  const revoked: Array<string> = []
  const ledger: TokenLedger = {
    noteToken: (sessionId, tokenId, expiresAtMs) => Effect.sync(() => void noted.push({ sessionId, tokenId, expiresAtMs })),
    tokensRevoked: (tokenIds) => Effect.sync(() => void revoked.push(...tokenIds)),
    isActive: () => Effect.succeed(true),
    activeAmong: (sessionIds) => Effect.succeed(new Set(sessionIds)),
    settleTokens: () => Effect.void
  }
  return { ledger, noted, revoked }
}
