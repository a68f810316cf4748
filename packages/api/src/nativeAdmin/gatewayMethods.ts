/**
 * Which gateway RPC methods a browser may call through the native admin relay
 * (docs/decisions/gateway-confinement.md). The Agent's configuration belongs to its
 * Configuration and revision, not to whoever opens the Control UI: methods that write the
 * gateway's configuration, its agents, its exec approvals or plugins, or update its software are
 * answered here with a `FORBIDDEN` error response and never reach the gateway (which, started
 * with `OPENCLAW_CONFIG_READONLY`, would refuse the config writers itself: two locks).
 *
 * Names from the OpenClaw 2026.9.6 gateway method table (`method-scopes`).
 */
export const REFUSED_GATEWAY_METHODS: ReadonlySet<string> = new Set([
  "config.set",
  "config.apply",
  "config.patch",
  "update.run",
  "update.hold",
  "wizard.start",
  "wizard.next",
  "agents.create",
  "agents.update",
  "agents.delete",
  "exec.approvals.set",
  "exec.approvals.node.set",
  "plugins.install",
  "plugins.uninstall",
  "plugins.setEnabled",
  "gateway.restart.request"
])

const REFUSED_LOWERCASE: ReadonlySet<string> = new Set([...REFUSED_GATEWAY_METHODS].map((method) => method.toLowerCase()))

export type BrowserFrameVerdict =
  | { readonly _tag: "Forward" }
  | { readonly _tag: "Refuse"; readonly response: string }
  | { readonly _tag: "Close" }

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/**
 * What to do with a browser frame after `connect`. The gateway JSON-parses every frame, text or
 * binary, so both are read here the same way; whatever is not one JSON object (an array could
 * be a batch) is not forwarded: the relay closes instead. A method is compared trimmed and
 * lower-cased, so no spelling the gateway might normalise slips through.
 */
export const vetBrowserFrame = (data: Buffer): BrowserFrameVerdict => {
  let frame: unknown
  try {
    frame = JSON.parse(data.toString("utf8"))
  } catch {
    return { _tag: "Close" }
  }
  if (!isRecord(frame)) return { _tag: "Close" }
  const method = frame["method"]
  if (method === undefined) return { _tag: "Forward" }
  if (typeof method !== "string") return { _tag: "Close" }
  if (!REFUSED_LOWERCASE.has(method.trim().toLowerCase())) return { _tag: "Forward" }
  const id = typeof frame["id"] === "string" ? frame["id"] : ""
  return {
    _tag: "Refuse",
    response: JSON.stringify({
      type: "res",
      id,
      ok: false,
      error: {
        code: "FORBIDDEN",
        message: "This Agent's configuration is managed by the control plane: change its Configuration and deploy instead."
      }
    })
  }
}
