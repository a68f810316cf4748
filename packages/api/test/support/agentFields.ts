/** The Agent body field suites' decoders and request builders: decode failures mapped to `details[]` as the HTTP pipeline maps them. */
import { expect } from "@effect/vitest"
import { detailsFromParseError, type ErrorDetail } from "@svc/core/errors"
import { ConfigurationId, NamespaceId, SecretId } from "@svc/core/schema"
import { Effect, Either, Schema } from "effect"
import { CreateAgent, UpdateAgent } from "@svc/core/api"

export const detailsOf = <A, I>(schema: Schema.Schema<A, I>) => (input: unknown): ReadonlyArray<ErrorDetail> => {
  const result = Schema.decodeUnknownEither(schema)(input)
  return Either.isRight(result) ? [] : Effect.runSync(detailsFromParseError(result.left))
}
export const createDetails = detailsOf(CreateAgent)
export const updateDetails = detailsOf(UpdateAgent)

export const configurationId = ConfigurationId.make()
export const namespaceId = NamespaceId.make()
export const secretId = SecretId.make()
export const source = { kind: "secret", namespaceId, id: secretId }
export const create = (fields: Record<string, unknown> = {}) => ({ name: "support bot", configurationId, ...fields })
export const update = (fields: Record<string, unknown> = {}) => ({ configurationId, ...fields })

/** Create with `fields` fails with exactly `details`. */
export const rejects = (fields: Record<string, unknown>, ...details: ReadonlyArray<[ErrorDetail["code"], string]>) =>
  expect(createDetails(create(fields))).toEqual(details.map(([code, path]) => ({ code, path })))
export const accepts = (fields: Record<string, unknown>) => expect(createDetails(create(fields))).toEqual([])

export const plugin = (entry: Record<string, unknown>) => ({ plugins: { "drv:search@1": { enabled: true, ...entry } } })
export const approvers = (count: number) => Array.from({ length: count }, (_, i) => ({ channel: "chat", id: `U${i}` }))
export const repositories = (count: number) => Array.from({ length: count }, (_, i) => ({ repositoryRef: `repo-${i}` }))

