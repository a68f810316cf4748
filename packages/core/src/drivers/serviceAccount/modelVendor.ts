/**
 * The ServiceAccount Driver over the model vendor's workspace Admin API (UPSTREAMS.md), for the
 * `model_accounts` Backend. Upstream accounts are named deterministically by the caller
 * (`<name>-<sa_id>`): when the answer to a create is lost, the Driver looks the name up and
 * adopts the account the upstream made, so a retry never leaves a second one.
 *
 * The lookup: UPSTREAMS.md names no lookup-by-name route, so none is assumed. The Driver reads
 * the workspace's account list (`GET .../service-accounts`, the collection the create route
 * posts to) page by page (`limit`, and the `next_page` cursor passed back as `page`) and matches
 * the exact name itself, so it finds the account whether or not the vendor filters by name.
 */
import { Effect, Option, Redacted, Schema } from "effect"
import { adminRequest, type AdminApiClient, errorCode, expectOk } from "./adminApi.js"
import { ServiceAccountUpstreamError, type ServiceAccountDriverShape } from "./driver.js"

/** The vendor's fixed Admin API origin; only `SVC_DEV_UPSTREAMS` redirects it (DESIGN §11). */
export const MODEL_VENDOR_ADMIN_ORIGIN = "https://api.modelvendor.com"

/** What the delivered credential may do: call models, nothing administrative. */
export const CREDENTIAL_SCOPES: ReadonlyArray<string> = ["inference"]

export interface ModelVendorSettings extends AdminApiClient {
  readonly driverId: string
  readonly backendId: string
  readonly workspaceId: string
  readonly credentialTtlSeconds: number
}

/** Accounts per list page (the vendor's maximum), and how many pages a lookup reads at most. */
export const LIST_PAGE_SIZE = 100
export const MAX_LIST_PAGES = 100

const CreatedAccount = Schema.Struct({ id: Schema.NonEmptyString, workspace_id: Schema.String, enabled: Schema.Boolean })
const AccountList = Schema.Struct({
  data: Schema.Array(Schema.Struct({ id: Schema.NonEmptyString, name: Schema.String })),
  next_page: Schema.NullOr(Schema.String)
})
const IssuedCredential = Schema.Struct({
  id: Schema.NonEmptyString,
  access_token: Schema.NonEmptyString,
  workspace_id: Schema.NonEmptyString,
  service_account_id: Schema.String,
  scopes: Schema.Array(Schema.String),
  expires_at: Schema.NullOr(Schema.String)
})

/** A lost or failed answer after which the upstream may still have acted. */
const outcomeUnknown = (error: ServiceAccountUpstreamError) =>
  error.reason === "timeout" || error.reason === "unavailable" || error.reason === "invalid_response"

export const makeModelVendorDriver = (settings: ModelVendorSettings): ServiceAccountDriverShape => {
  const base = `/v1/manage/workspaces/${encodeURIComponent(settings.workspaceId)}/service-accounts`
  const request = (method: string, path: string, body?: unknown) => adminRequest(settings, method, `${base}${path}`, body)

  /** A 404 with `code` on a delete means the thing is already gone. */
  const deleted = (path: string, code: string) =>
    Effect.flatMap(request("DELETE", path), (answer) =>
      answer.status === 404 && Option.getOrUndefined(errorCode(answer)) === code
        ? Effect.void
        : Effect.asVoid(expectOk(Schema.Struct({ deleted: Schema.Literal(true) }))(answer)))

  /** One page of the workspace's accounts. */
  const listPage = (page: string | null) =>
    request("GET", `?limit=${LIST_PAGE_SIZE}${page === null ? "" : `&page=${encodeURIComponent(page)}`}`).pipe(
      Effect.flatMap(expectOk(AccountList))
    )

  const findAccount = (upstreamName: string): Effect.Effect<Option.Option<string>, ServiceAccountUpstreamError> => {
    const search = (page: string | null, pagesRead: number): Effect.Effect<Option.Option<string>, ServiceAccountUpstreamError> =>
      Effect.flatMap(listPage(page), (list) => {
        const found = list.data.find((account) => account.name === upstreamName)
        if (found !== undefined) return Effect.succeed(Option.some(found.id))
        if (list.next_page === null) return Effect.succeed(Option.none())
        // A cursor that does not move on, or a list longer than any workspace holds, is not an answer.
        if (list.next_page === page || pagesRead + 1 >= MAX_LIST_PAGES) {
          return Effect.fail(new ServiceAccountUpstreamError({ reason: "invalid_response" }))
        }
        return search(list.next_page, pagesRead + 1)
      })
    return search(null, 0)
  }

  const createAccount = (upstreamName: string) =>
    request("POST", "", { name: upstreamName }).pipe(
      Effect.flatMap(expectOk(CreatedAccount)),
      Effect.map((account) => ({ upstreamId: account.id })),
      Effect.catchIf(outcomeUnknown, (error) =>
        // The upstream may have made it: adopt it rather than leave it for a second create.
        Effect.flatMap(findAccount(upstreamName), Option.match({
          onNone: () => Effect.fail(error),
          onSome: (upstreamId) => Effect.succeed({ upstreamId })
        })))
    )

  const issueCredential = (upstreamId: string, name: string) =>
    request("POST", `/${encodeURIComponent(upstreamId)}/credentials`, {
      name,
      ttl: settings.credentialTtlSeconds,
      scopes: CREDENTIAL_SCOPES
    }).pipe(
      Effect.flatMap(expectOk(IssuedCredential)),
      Effect.flatMap((credential) => {
        const expiresAt = credential.expires_at === null ? null : new Date(credential.expires_at)
        return expiresAt !== null && Number.isNaN(expiresAt.getTime()) || credential.service_account_id !== upstreamId
          ? Effect.fail(new ServiceAccountUpstreamError({ reason: "invalid_response" }))
          : Effect.succeed({
            id: credential.id,
            accessToken: Redacted.make(credential.access_token),
            workspaceId: credential.workspace_id,
            expiresAt
          })
      })
    )

  return {
    id: settings.driverId,
    backendId: settings.backendId,
    createAccount,
    findAccount,
    issueCredential,
    deleteCredential: (upstreamId, credentialId) =>
      deleted(`/${encodeURIComponent(upstreamId)}/credentials/${encodeURIComponent(credentialId)}`, "credential_not_found"),
    deleteAccount: (upstreamId) => deleted(`/${encodeURIComponent(upstreamId)}`, "service_account_not_found")
  }
}
