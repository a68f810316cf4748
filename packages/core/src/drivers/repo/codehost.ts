/**
 * The `code_host` Repo Driver: options and admission from the registry the process loaded at
 * start-up, sessions through the credential service's control socket.
 */
import { Effect, Layer, Option, Schema } from "effect"
import { approvedRepository, type RepositoryRegistry } from "../../config/installation/registry.js"
import { CredentialServiceLimits } from "../../schema/limits.js"
import { type FrozenGrant, IssuedSession, RepeatedSession, SessionStatus } from "./control.js"
import { ControlUnavailable, controlRequest } from "./controlClient.js"
import { DESCRIBE_BATCH, RepositoryDescriptions } from "./descriptions.js"
import { type OpenResult, RepoDriver, type RepoDriverShape, RepositoryNotAdmitted, SessionRefused } from "./driver.js"
import { grantFingerprint } from "./grant.js"

export interface CodehostRepoSettings {
  readonly id: string
  readonly controlSocket: string
  readonly sessionDurationSeconds: number
}

const Data = <A, I>(schema: Schema.Schema<A, I>) => Schema.Struct({ data: schema })
const decode = <A, I>(schema: Schema.Schema<A, I>, body: unknown) =>
  Schema.decodeUnknown(Data(schema))(body).pipe(
    Effect.map((envelope) => envelope.data),
    Effect.mapError(() => new ControlUnavailable({ reason: "the credential service answered an unexpected body" }))
  )

const messageOf = (body: unknown): string => {
  const error = typeof body === "object" && body !== null && "error" in body ? (body as { error: unknown }).error : undefined
  const message = typeof error === "object" && error !== null && "message" in error ? (error as { message: unknown }).message : undefined
  return typeof message === "string" ? message : "refused"
}

const admissionAgeMs = (admissionId: string): number => Date.now() - Number(admissionId.slice(0, 13))

export const makeCodehostRepoDriver = (settings: CodehostRepoSettings, registry: RepositoryRegistry): RepoDriverShape => {
  const socket = settings.controlSocket
  const duration = Math.min(settings.sessionDurationSeconds, registry.maximumDurationSeconds)

  const listOptions: RepoDriverShape["listOptions"] = (namespaceId) =>
    registry.repositories.flatMap((repository) => {
      const policy = repository.namespaces.find((p) => p.namespaceId === namespaceId)
      return policy === undefined
        ? []
        : [{ repositoryRef: repository.repositoryRef, displayName: repository.repository, allowedProfiles: policy.profiles }]
    })

  const resolve: RepoDriverShape["resolve"] = (namespaceId, binding) => {
    const approved = approvedRepository(registry, namespaceId, binding.repositoryRef)
    if (approved === undefined) {
      return Effect.fail(new RepositoryNotAdmitted({ repositoryRef: binding.repositoryRef, reason: "not-approved" }))
    }
    const profile = approved.policy.profiles.find((p) => p === binding.profile)
    if (profile === undefined) {
      return Effect.fail(new RepositoryNotAdmitted({ repositoryRef: binding.repositoryRef, reason: "profile-not-allowed" }))
    }
    const grant: FrozenGrant = {
      namespaceId: namespaceId as FrozenGrant["namespaceId"],
      repositoryRef: binding.repositoryRef,
      profile,
      fingerprint: grantFingerprint({ registry, ...approved, profile })
    }
    return Effect.succeed(grant)
  }

  /** SPEC 9: refuse new attempts unless the service advertises durable admission version 1 or later. */
  const checkAdmissionReady = controlRequest(socket, "GET", "/v1/capabilities").pipe(
    Effect.flatMap((response) => {
      const version = (response.body as { data?: { durableAdmissionVersion?: unknown } } | undefined)?.data?.durableAdmissionVersion
      return response.status === 200 && typeof version === "number" && version >= 1
        ? Effect.void
        : Effect.fail(new ControlUnavailable({ reason: "the credential service does not offer durable admission" }))
    })
  )

  const open: RepoDriverShape["open"] = (grant, admissionId) =>
    controlRequest(socket, "POST", "/v1/sessions", {
      headers: { "x-admission-id": admissionId },
      body: { durationSeconds: duration, grant }
    }).pipe(Effect.flatMap((response): Effect.Effect<OpenResult, ControlUnavailable | SessionRefused> => {
      if (response.status === 201) {
        return Effect.map(decode(IssuedSession, response.body), (issued) => ({ result: "created" as const, ...issued }))
      }
      if (response.status === 200) {
        return Effect.map(decode(RepeatedSession, response.body), ({ session }) => ({ result: "recovered" as const, session }))
      }
      if (response.status === 400 && admissionAgeMs(admissionId) >= CredentialServiceLimits.unseenAdmissionIdMaxAgeSeconds * 1000) {
        return Effect.succeed({ result: "missing" as const })
      }
      if (response.status >= 500) return Effect.fail(new ControlUnavailable({ reason: `the credential service answered ${response.status}` }))
      return Effect.fail(new SessionRefused({ status: response.status, message: messageOf(response.body) }))
    }))

  const sessionCall = (method: "GET" | "POST", target: string) =>
    controlRequest(socket, method, target).pipe(Effect.flatMap((response) =>
      response.status === 404
        ? Effect.succeedNone
        : response.status === 200
        ? Effect.map(decode(SessionStatus, response.body), Option.some)
        : Effect.fail(new ControlUnavailable({ reason: `the credential service answered ${response.status}` }))
    ))

  /** Batches of DESCRIBE_BATCH references, two at a time; any failed batch fails the whole call. */
  const describe: RepoDriverShape["describe"] = (repositoryRefs) =>
    Effect.forEach(
      Array.from({ length: Math.ceil(repositoryRefs.length / DESCRIBE_BATCH) }, (_, i) =>
        repositoryRefs.slice(i * DESCRIBE_BATCH, (i + 1) * DESCRIBE_BATCH)),
      (batch) =>
        controlRequest(socket, "POST", "/v1/repository-descriptions", { body: { repositoryRefs: batch } }).pipe(
          Effect.flatMap((response) =>
            response.status === 200
              ? decode(RepositoryDescriptions, response.body)
              : Effect.fail(new ControlUnavailable({ reason: `the credential service answered ${response.status}` }))
          )
        ),
      { concurrency: 2 }
    ).pipe(Effect.map((answers) =>
      new Map(answers.flatMap((answer) => answer.repositories.map((r) => [r.repositoryRef, r.description ?? undefined] as const)))
    ))

  return {
    id: settings.id,
    listOptions,
    describe,
    resolve,
    checkAdmissionReady,
    open,
    status: (sessionId) => sessionCall("GET", `/v1/sessions/${encodeURIComponent(sessionId)}`),
    close: (sessionId) => sessionCall("POST", `/v1/sessions/${encodeURIComponent(sessionId)}/close`)
  }
}

/**
 * The Repo Driver a process runs with: present when the Installation selects `drivers.repo`
 * and has a `code_host` Backend (whose registry every process loaded at start-up).
 */
export const selectRepoDriver = (config: {
  readonly installation: { readonly drivers: { readonly repo?: CodehostRepoSettings | undefined } }
  readonly repositoryRegistry?: RepositoryRegistry | undefined
}): Option.Option<Layer.Layer<RepoDriver>> => {
  const selected = config.installation.drivers.repo
  return selected === undefined || config.repositoryRegistry === undefined
    ? Option.none()
    : Option.some(Layer.succeed(RepoDriver, makeCodehostRepoDriver(selected, config.repositoryRegistry)))
}

/** A fresh `X-Admission-Id`: this instant's Unix milliseconds and a random UUIDv4. */
export const newAdmissionId = (): string => `${Date.now()}-${crypto.randomUUID()}`
