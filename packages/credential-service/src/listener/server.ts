/**
 * The client listener as a scoped resource: a Node HTTP server (plain HTTP; DESIGN §12 allows
 * it on loopback in development) with the SPEC 8 socket and header limits, closed with the
 * process. Session lookups and token minting are Effects run on the layer's runtime.
 */
import type { RepositoryProfileName } from "@svc/core/config"
import { RepositorySessionsRepo } from "@svc/core/db"
import { CredentialServiceLimits as L } from "@svc/core/schema"
import { Duration, Effect, Either, Layer, Option, Runtime } from "effect"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import type { CodeHostClient } from "../upstream/codeHost.js"
import { SessionTokens } from "../upstream/tokenCache.js"
import { makeExchangeSlots } from "./exchanges.js"
import { type ActiveSession, makeHandler } from "./handler.js"

export interface ListenerOptions {
  readonly host: string
  readonly port: number
  readonly listenerUrl: string
  readonly client: CodeHostClient
}

/**
 * How long one exchange may last. Always SPEC 8's 5 minutes in the process (main.ts passes
 * nothing and no variable reaches it); only tests build a listener with a shorter one.
 */
export interface ListenerLimits {
  readonly exchange: Duration.Duration
}

export const listenerLimits: ListenerLimits = { exchange: Duration.seconds(L.exchangeTotalSeconds) }

export const listenerLayer = (options: ListenerOptions, limits: ListenerLimits = listenerLimits) =>
  Layer.scopedDiscard(Effect.gen(function* () {
    const repo = yield* RepositorySessionsRepo
    const tokens = yield* SessionTokens
    const runtime = yield* Effect.runtime<never>()
    const run = Runtime.runPromise(runtime)
    const exchangeLimitMs = Duration.toMillis(limits.exchange)
    /**
     * Read per request: a closed session is refused whatever this process has cached. A session
     * closed by another replica is learnt of here, so the tokens this process holds for it are
     * revoked before the refusal (only their holder can revoke them).
     */
    const lookup = (digest: string) =>
      run(repo.byBearer(digest).pipe(Effect.flatMap(Option.match({
        onNone: () => Effect.succeed(undefined),
        onSome: (row): Effect.Effect<ActiveSession | undefined> =>
          row.state !== "active" || row.expired ? Effect.as(tokens.revokeFor(row.id), undefined) : Effect.succeed({
            id: row.id,
            repository: row.repository,
            repositoryId: row.repository_id,
            profile: row.profile as RepositoryProfileName,
            pushRefAllowlist: row.push_ref_allowlist
          })
      }))))
    const handler = makeHandler({
      lookup,
      // The UpstreamError itself is thrown, so the handler can tell a full provider queue (503).
      tokenFor: (session) => run(Effect.either(tokens.tokenFor(session))).then(Either.getOrThrowWith((error) => error)),
      gitOrigin: options.client.gitOrigin,
      apiOrigin: options.client.apiOrigin,
      listenerUrl: options.listenerUrl,
      slots: makeExchangeSlots(),
      exchangeLimitMs,
      warn: (message, fields) => void Runtime.runFork(runtime)(Effect.logWarning(message).pipe(Effect.annotateLogs(fields)))
    })
    const server = http.createServer({
      maxHeaderSize: L.headerBytes,
      requestTimeout: exchangeLimitMs
    }, (req, res) => void handler(req, res))
    // Node drops pairs past maxHeadersCount silently; one more is kept so the handler can refuse (431).
    server.maxHeadersCount = L.headerPairs + 1
    server.maxConnections = L.socketsPerListener
    yield* Effect.acquireRelease(
      Effect.async<void>((resume) => {
        server.listen(options.port, options.host, () => resume(Effect.void))
      }),
      () => Effect.async<void>((resume) => {
        server.closeAllConnections()
        server.close(() => resume(Effect.void))
      })
    )
    const address = server.address() as AddressInfo
    yield* Effect.logInfo(`credential service client listener on ${address.address}:${address.port}`).pipe(
      Effect.annotateLogs({ exchangeLimitMs })
    )
  }))
