/**
 * `SVC_DEV_UPSTREAMS` (DESIGN §11): a JSON object mapping a fixed upstream origin to a loopback
 * URL, so development and tests reach a local implementation of the upstream protocol through
 * the production client. Only with `SVC_ENV=development`; production stops with exit 78.
 */
import { Config, ConfigError, Either, Option } from "effect"
import * as V from "./variables.js"

export type DevUpstreams = ReadonlyMap<string, string>

const isLoopbackOrigin = (value: string): boolean => {
  try {
    const url = new URL(value)
    return url.origin === value.replace(/\/$/, "") && url.protocol === "http:" &&
      (url.hostname === "127.0.0.1" || url.hostname === "localhost" || url.hostname === "[::1]")
  } catch {
    return false
  }
}

const isHttpsOrigin = (value: string): boolean => {
  try {
    const url = new URL(value)
    return url.protocol === "https:" && url.origin === value
  } catch {
    return false
  }
}

const RULE = `a JSON object of https origin to loopback http origin, e.g. {"https://api.example.com":"http://127.0.0.1:9001"}`

export const parseDevUpstreams: V.Parse<DevUpstreams> = (raw) => {
  let parsed: unknown
  try {
    parsed = JSON.parse(raw)
  } catch {
    return Either.left(V.expected(RULE, raw))
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return Either.left(V.expected(RULE, raw))
  const entries = Object.entries(parsed)
  const valid = entries.every(([from, to]) => isHttpsOrigin(from) && typeof to === "string" && isLoopbackOrigin(to))
  return valid ? Either.right(new Map(entries.map(([from, to]) => [from, String(to).replace(/\/$/, "")]))) : Either.left(V.expected(RULE, raw))
}

export const DevUpstreamsConfig: Config.Config<DevUpstreams> = Config.all([
  V.withDefault(V.variable("SVC_ENV", V.literal("development", "production")), "development" as const),
  V.optional(V.variable("SVC_DEV_UPSTREAMS", parseDevUpstreams))
]).pipe(
  Config.mapOrFail(([env, upstreams]) =>
    env === "production" && Option.isSome(upstreams)
      ? Either.left(ConfigError.InvalidData(["SVC_DEV_UPSTREAMS"], "only allowed when SVC_ENV=development"))
      : Either.right(Option.getOrElse(upstreams, (): DevUpstreams => new Map()))
  )
)

/** Where a request for the fixed `origin` goes: its override, or the origin itself. */
export const upstreamOrigin = (upstreams: DevUpstreams, origin: string): string => upstreams.get(origin) ?? origin
