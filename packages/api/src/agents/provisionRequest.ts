/**
 * What an Agent provisioning request asks for, resolved before admission (SPEC 4.4, DESIGN §7):
 * the Configuration document and the Agent's launch fields, from the inline `configuration` or
 * from a Preset rendered with `variables`. With a Preset, each launch field the body supplies
 * replaces the Preset's whole (the two repository forms count as one field); nothing is merged
 * deeper. Rendered settings pass the same field schemas as an Agent create body.
 */
import { type ErrorDetail, detailsFromIssues, InvalidRequest } from "@svc/core/errors"
import { type PresetTemplate, renderPreset } from "@svc/core/presets"
import { Limits, RequestBody } from "@svc/core/schema"
import { Either, Effect, ParseResult, Schema } from "effect"
import { createHash } from "node:crypto"
import type { SecretBindings } from "@svc/core/api"
import { getPreset } from "../presets/presets.js"
import { CreateAgent } from "@svc/core/api"
import type { ProvisionAgent } from "@svc/core/api"

/** The launch fields of a create body, without its name and Configuration reference. */
export type LaunchFields = Omit<CreateAgent, "name" | "configurationId">

export interface ResolvedRequest {
  readonly configuration: { readonly values: Readonly<Record<string, unknown>>; readonly secretBindings: SecretBindings }
  /** A create body without its Configuration reference. */
  readonly agent: Omit<CreateAgent, "configurationId">
}

const { configurationId: _c, name: _n, workspaceDefaultsId: _w, repositoryBindings: _r, ...presetFields } = CreateAgent.from.fields

/** The launch settings a Preset template may carry (DESIGN §7), checked as an Agent create body checks them. */
const PresetLaunchSettings = RequestBody(presetFields)

const LAUNCH_FIELDS = [
  "executionMode",
  "backendId",
  "harnessAuth",
  "initialWorkspaceFiles",
  "plugins",
  "pluginApprovers",
  "repositoryAccess",
  "repositoryBindings",
  "workspaceDefaultsId"
] as const satisfies ReadonlyArray<keyof LaunchFields>

/** The launch fields a provisioning body supplies. */
const suppliedLaunchFields = (body: ProvisionAgent): LaunchFields => {
  const fields: Record<string, unknown> = {}
  for (const field of LAUNCH_FIELDS) if (body[field] !== undefined) fields[field] = body[field]
  return fields as LaunchFields
}

const invalid = (message: string, details: ReadonlyArray<ErrorDetail>) =>
  new InvalidRequest({ message, details: details.slice(0, Limits.errorDetails) })

const decodeLaunch = Schema.decodeUnknownEither(PresetLaunchSettings, { errors: "all", onExcessProperty: "error" })

/** Body fields win, whole; a body repository form replaces either form of the Preset. */
const overPreset = (preset: LaunchFields, body: LaunchFields): LaunchFields => {
  const base: Record<string, unknown> = { ...preset }
  if (body.repositoryAccess !== undefined || body.repositoryBindings !== undefined) {
    delete base.repositoryAccess
    delete base.repositoryBindings
  }
  return { ...base, ...body } as LaunchFields
}

/**
 * The Preset (caller's exact `preset:read`, else 404) rendered with the variables: every
 * problem is a 400 detail, at `/variables/<name>` or at the rendered `/agent/...` and
 * `/configuration/...` pointers. Rendered values may hold `password` variables: never logged.
 */
const fromPreset = (namespaceId: string, presetId: string, variables: Readonly<Record<string, unknown>>, body: ProvisionAgent) =>
  Effect.gen(function* () {
    const preset = yield* getPreset(namespaceId, presetId)
    // Stored templates were admitted by PresetTemplate; the response schema widens their types.
    const rendered = renderPreset(preset.template as PresetTemplate, variables)
    if (Either.isLeft(rendered)) {
      return yield* invalid("The Preset does not render with these variables.", rendered.left.problems)
    }
    const launch = decodeLaunch(rendered.right.agent)
    if (Either.isLeft(launch)) {
      // Prefixed before the pointer is made, so the SPEC 7.1 bound of 512 holds for the whole path.
      const issues = ParseResult.ArrayFormatter.formatErrorSync(launch.left).map((issue) => ({ ...issue, path: ["agent", ...issue.path] }))
      return yield* invalid("The Preset's rendered Agent settings are not valid.", detailsFromIssues(issues))
    }
    const configuration = rendered.right.configuration
    const resolved: ResolvedRequest = {
      configuration: {
        values: configuration?.values ?? {},
        secretBindings: (configuration?.secretBindings ?? {}) as SecretBindings
      },
      agent: { name: body.name, ...overPreset(launch.right as LaunchFields, suppliedLaunchFields(body)) }
    }
    return resolved
  })

export const resolveRequest = (namespaceId: string, body: ProvisionAgent) =>
  body.presetId !== undefined
    ? fromPreset(namespaceId, body.presetId, body.variables ?? {}, body)
    : Effect.succeed<ResolvedRequest>({
      configuration: { values: body.configuration!.values, secretBindings: body.configuration!.secretBindings ?? {} },
      agent: { name: body.name, ...suppliedLaunchFields(body) }
    })

/** JSON with object keys sorted at every level: equal bodies give equal text whatever their key order. */
const canonicalJson = (value: unknown): string =>
  JSON.stringify(value, (_key, item: unknown) =>
    typeof item === "object" && item !== null && !Array.isArray(item)
      ? Object.fromEntries(Object.entries(item).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : item)

/**
 * The SHA-256 of the canonical body, compared when a `requestId` comes again. The body holds
 * the random `requestId`, so the digest does not reveal a guessable variable (a password).
 */
export const bodyDigest = (body: ProvisionAgent): string => createHash("sha256").update(canonicalJson(body)).digest("hex")
