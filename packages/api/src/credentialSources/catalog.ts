/**
 * The Credential Gateway catalog (SPEC 2.10, DESIGN §13): the source types the gateway can hold
 * and, per type, its non-secret `config` fields and its `secrets` fields. Only `modelvendor`
 * exists. Checked before any Secret is read (SPEC 4.6).
 */
import type { CreateCredentialSource } from "@svc/core/api"
import { type ErrorDetail, InvalidRequest, jsonPointer, NotFound } from "@svc/core/errors"
import { Effect } from "effect"

interface CatalogEntry {
  readonly config: Readonly<Record<string, { readonly required: boolean }>>
  readonly secrets: Readonly<Record<string, { readonly required: boolean }>>
}

export const catalog: Readonly<Record<string, CatalogEntry>> = {
  modelvendor: { config: { base_url: { required: false } }, secrets: { api_key: { required: true } } }
}

const fieldDetails = (part: "config" | "secrets", allowed: CatalogEntry["config"], given: Record<string, unknown>) => {
  const details: Array<ErrorDetail> = []
  for (const key of Object.keys(given)) {
    if (!Object.hasOwn(allowed, key)) details.push({ code: "UNKNOWN_FIELD", path: jsonPointer([part, key]) })
  }
  for (const [key, field] of Object.entries(allowed)) {
    if (field.required && !Object.hasOwn(given, key)) details.push({ code: "REQUIRED", path: jsonPointer([part, key]) })
  }
  return details
}

/** The body's type and fields against the catalog: 404 for an unknown type, 400 with details. */
export const admitCatalog = (payload: CreateCredentialSource) =>
  Effect.gen(function* () {
    const entry = Object.hasOwn(catalog, payload.type) ? catalog[payload.type] : undefined
    if (entry === undefined) return yield* new NotFound({ message: "The credential source type is not in the Credential Gateway catalog." })
    const details = [...fieldDetails("config", entry.config, payload.config ?? {}), ...fieldDetails("secrets", entry.secrets, payload.secrets ?? {})]
    if (details.length > 0) {
      return yield* new InvalidRequest({ message: "The fields do not match the credential source type's catalog entry.", details })
    }
  })
