/**
 * The code host's App API as the credential service uses it (UPSTREAMS.md): mint an
 * installation token restricted to one repository and a profile's permissions, and revoke it.
 * Fixed origins; `SVC_DEV_UPSTREAMS` may point them at a loopback implementation in development.
 */
import type { RepositoryRegistry } from "@svc/core/config"
import { type DevUpstreams, upstreamOrigin } from "@svc/core/config"
import { type PermissionMap } from "@svc/core/drivers/repo"
import { CredentialServiceLimits } from "@svc/core/schema"
import { Clock, Data, Effect } from "effect"
import type { KeyObject } from "node:crypto"
import { responseLimited } from "../listener/bodies.js"
import { appJwt } from "./appJwt.js"
import { makeProviderQueue } from "./providerQueue.js"

export const API_ORIGIN = "https://api.github.com"
export const GIT_ORIGIN = "https://github.com"

/**
 * A provider action failed; `busy` when it was refused because the provider-action queue was
 * full, `timedOut` when it was cut off at the provider-action limit, `oversized` when the code
 * host's answer passed `PROVIDER_ANSWER_BYTES`.
 */
export class UpstreamError extends Data.TaggedError("UpstreamError")<{
  readonly reason: string
  readonly busy?: boolean
  readonly timedOut?: boolean
  readonly oversized?: boolean
}> {}

/**
 * The most of an App API answer the service reads (docs/decisions/repository-credentials.md).
 * SPEC 8 sets no limit; without one, a code host that keeps sending would fill the memory of the
 * process that holds the App's private key. Real answers are kilobytes (a token answer lists each
 * repository it covers); the cap is the 8 MiB the listener allows the API answers it relays.
 */
export const PROVIDER_ANSWER_BYTES = CredentialServiceLimits.apiResponseBytes

export interface InstallationToken {
  readonly token: string
  readonly expiresAtMs: number
}

export interface CodeHostClient {
  readonly apiOrigin: string
  readonly gitOrigin: string
  readonly mint: (repositoryId: string, permissions: PermissionMap) => Effect.Effect<InstallationToken, UpstreamError>
  /** A token for several repositories at once (repository metadata reads). */
  readonly mintFor: (
    repositoryIds: ReadonlyArray<string>,
    permissions: PermissionMap
  ) => Effect.Effect<InstallationToken, UpstreamError>
  /** `GET /repos/{owner}/{repo}`: its id and description; `undefined` when the host does not show it (403/404). */
  readonly readRepository: (
    token: string,
    repository: string
  ) => Effect.Effect<{ readonly id: unknown; readonly description: unknown } | undefined, UpstreamError>
  readonly revoke: (token: string) => Effect.Effect<void, UpstreamError>
}

interface Answer {
  readonly status: number
  readonly text: string
}

/** The body is read under the request's signal too, so interrupting the action cancels a stalled read. */
const call = (url: string, init: RequestInit) =>
  Effect.tryPromise({
    try: async (signal): Promise<Answer> => {
      const response = await fetch(url, { ...init, redirect: "error", signal })
      if (response.status < 200 || response.status >= 300) {
        await response.body?.cancel()
        return { status: response.status, text: "" }
      }
      // The signal closes a stalled answer; past the cap the rest is not read.
      const body = await responseLimited(response, PROVIDER_ANSWER_BYTES, signal)
      if (body === undefined) throw new UpstreamError({ reason: "the code host's answer is too large", oversized: true })
      return { status: response.status, text: body.toString("utf8") }
    },
    catch: (error) =>
      error instanceof UpstreamError ? error : new UpstreamError({ reason: "the code host could not be reached" })
  })

const parsed = <A>(answer: Answer, what: string) =>
  Effect.try({
    try: () => JSON.parse(answer.text) as A,
    catch: () => new UpstreamError({ reason: `${what} is not JSON` })
  })

export const makeCodeHostClient = (
  registry: RepositoryRegistry,
  key: KeyObject,
  overrides: DevUpstreams
): CodeHostClient => {
  const apiOrigin = upstreamOrigin(overrides, API_ORIGIN)
  const gitOrigin = upstreamOrigin(overrides, GIT_ORIGIN)
  const headers = { accept: "application/vnd.github+json", "user-agent": "svc-credential-service" }
  const queue = makeProviderQueue()
  /**
   * Every App API call is a provider action: one at a time, a bounded queue, and at most 30 s
   * each (SPEC 8), counted from when it starts, not while it waits. The whole action is timed,
   * reading the answer included: a code host that sends headers and then stalls would otherwise
   * hold the one provider permit, and every mint behind it, for ever.
   */
  const provider = <A>(what: string, action: Effect.Effect<A, UpstreamError>): Effect.Effect<A, UpstreamError> =>
    queue.run(action.pipe(
      Effect.timeoutFail({
        duration: `${CredentialServiceLimits.providerActionSeconds} seconds`,
        onTimeout: () => new UpstreamError({ reason: "the code host did not answer in time", timedOut: true })
      }),
      Effect.tapError((error) =>
        error.timedOut === true
          ? Effect.logWarning(`provider action cut off at its time limit: ${what}`).pipe(
            Effect.annotateLogs({ limitSeconds: CredentialServiceLimits.providerActionSeconds })
          )
          : error.oversized === true
          ? Effect.logWarning(`provider answer refused at its size limit: ${what}`).pipe(
            Effect.annotateLogs({ limitBytes: PROVIDER_ANSWER_BYTES })
          )
          : Effect.void
      )
    )).pipe(
      Effect.catchTag("ProviderBusy", (busy) => Effect.fail(new UpstreamError({ reason: busy.message, busy: true })))
    )

  const mintFor = (repositoryIds: ReadonlyArray<string>, permissions: PermissionMap) =>
    provider("mint an installation token", Effect.gen(function* () {
      const jwt = appJwt(key, registry.appId, yield* Clock.currentTimeMillis)
      const response = yield* call(`${apiOrigin}/app/installations/${registry.installationId}/access_tokens`, {
        method: "POST",
        headers: { ...headers, authorization: `Bearer ${jwt}`, "content-type": "application/json" },
        body: JSON.stringify({ repository_ids: repositoryIds.map(Number), permissions })
      })
      if (response.status !== 201) return yield* new UpstreamError({ reason: `token request answered ${response.status}` })
      const body = yield* parsed<{ token?: unknown; expires_at?: unknown }>(response, "token response")
      const expiresAtMs = typeof body.expires_at === "string" ? Date.parse(body.expires_at) : Number.NaN
      if (typeof body.token !== "string" || Number.isNaN(expiresAtMs)) {
        return yield* new UpstreamError({ reason: "token response lacks token or expires_at" })
      }
      return { token: body.token, expiresAtMs }
    }))

  const mint = (repositoryId: string, permissions: PermissionMap) => mintFor([repositoryId], permissions)

  const readRepository = (token: string, repository: string) =>
    provider("read repository metadata", Effect.gen(function* () {
      const response = yield* call(`${apiOrigin}/repos/${repository}`, { headers: { ...headers, authorization: `token ${token}` } })
      if (response.status === 403 || response.status === 404) return undefined
      if (response.status !== 200) return yield* new UpstreamError({ reason: `repository read answered ${response.status}` })
      const body = yield* parsed<unknown>(response, "repository response")
      if (typeof body !== "object" || body === null) return yield* new UpstreamError({ reason: "repository response is not an object" })
      const fields = body as { id?: unknown; description?: unknown }
      return { id: fields.id, description: fields.description }
    }))

  const revoke = (token: string) =>
    provider("revoke an installation token", call(`${apiOrigin}/installation/token`, { method: "DELETE", headers: { ...headers, authorization: `token ${token}` } }).pipe(
      Effect.flatMap((response) =>
        // 401: the token is already invalid, which is what revocation wants.
        response.status === 204 || response.status === 401
          ? Effect.void
          : Effect.fail(new UpstreamError({ reason: `revocation answered ${response.status}` }))
      )
    ))

  return { apiOrigin, gitOrigin, mint, mintFor, readRepository, revoke }
}
