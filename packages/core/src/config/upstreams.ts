/**
 * Fixed upstream origins and their development override (DESIGN §11). Production always talks
 * to the fixed origins; `SVC_DEV_UPSTREAMS` (a JSON map of fixed origin to a loopback URL) is
 * accepted only with `SVC_ENV=development`, so tests can stand up a real local implementation
 * of each upstream protocol.
 */
import { Config, ConfigError, Effect, Either, Option } from "effect"

export type UpstreamOverrides = ReadonlyMap<string, string>

const LOOPBACK = /^http:\/\/(127\.0\.0\.1|localhost|\[::1\]):[0-9]{1,5}$/

const parse = (text: string): Either.Either<UpstreamOverrides, string> => {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    return Either.left("must be a JSON object of fixed origin to loopback URL")
  }
  if (typeof json !== "object" || json === null || Array.isArray(json)) {
    return Either.left("must be a JSON object of fixed origin to loopback URL")
  }
  const entries = Object.entries(json)
  for (const [origin, target] of entries) {
    if (!/^https:\/\/[a-z0-9.-]+$/.test(origin)) return Either.left(`${origin}: keys must be https origins`)
    if (typeof target !== "string" || !LOOPBACK.test(target)) {
      return Either.left(`${origin}: must map to an http loopback origin such as http://127.0.0.1:9001`)
    }
  }
  return Either.right(new Map(entries as Array<[string, string]>))
}

/** The overrides of this process; empty when `SVC_DEV_UPSTREAMS` is unset. */
export const UpstreamOverridesConfig: Config.Config<UpstreamOverrides> = Config.all({
  env: Config.string("SVC_ENV").pipe(Config.withDefault("development")),
  raw: Config.option(Config.string("SVC_DEV_UPSTREAMS"))
}).pipe(
  Config.mapOrFail(({ env, raw }) =>
    Option.match(raw, {
      onNone: () => Either.right(new Map<string, string>()),
      onSome: (text) =>
        env !== "development"
          ? Either.left(ConfigError.InvalidData(["SVC_DEV_UPSTREAMS"], "is accepted only with SVC_ENV=development"))
          : Either.mapLeft(parse(text), (message) => ConfigError.InvalidData(["SVC_DEV_UPSTREAMS"], message))
    })
  )
)

/** Where requests for the fixed `origin` go. */
export const upstreamOrigin = (overrides: UpstreamOverrides, origin: string): string => overrides.get(origin) ?? origin

export const loadUpstreamOverrides = Effect.suspend(() => UpstreamOverridesConfig)
