import * as net from "node:net"

/** Whether an address belongs to one of the trusted reverse proxies. */
export type TrustedProxies = (address: string) => boolean

const unmapped = (address: string): string => (address.startsWith("::ffff:") && net.isIPv4(address.slice(7)) ? address.slice(7) : address)

/**
 * A matcher for the `SVC_TRUSTED_PROXIES` entries (addresses or CIDR blocks); null when none is
 * configured, which turns per-address sign-in limits off (SPEC 5.4).
 */
export const trustedProxiesOf = (entries: ReadonlyArray<string>): TrustedProxies | null => {
  if (entries.length === 0) return null
  const list = new net.BlockList()
  for (const entry of entries) {
    const [address, prefix] = entry.split("/")
    const type = net.isIPv6(address!) ? "ipv6" : "ipv4"
    if (prefix === undefined) list.addAddress(address!, type)
    else list.addSubnet(address!, Number(prefix), type)
  }
  return (address) => {
    const plain = unmapped(address)
    const family = net.isIP(plain)
    return family !== 0 && list.check(plain, family === 6 ? "ipv6" : "ipv4")
  }
}

/**
 * The client's address for per-address sign-in limits (SPEC 5.4), only with a trusted proxy
 * configured: without one every browser behind an ingress would look the same, so null.
 *
 * The key is the left-most address a trusted party vouches for. The peer address comes from the
 * connection; each `X-Forwarded-For` hop, read from the right, was written by the trusted proxy
 * just after it. The walk stops at the first hop that is not a trusted proxy (that is the client;
 * entries further left are its own claims), and before a hop that is not an address (nothing
 * past it can be verified), keeping the last verified one. So a client that bypasses the
 * ingress is keyed by its own peer address, and forging `X-Forwarded-For` never lets a client
 * choose its key: the walk never reaches what it wrote.
 */
export const clientAddressOf = (
  peer: string | undefined,
  forwardedFor: string | undefined,
  trusted: TrustedProxies | null
): string | null => {
  if (trusted === null || peer === undefined || net.isIP(unmapped(peer)) === 0) return null
  let client = unmapped(peer)
  const hops = (forwardedFor ?? "").split(",").map((hop) => unmapped(hop.trim())).filter((hop) => hop.length > 0)
  for (let i = hops.length - 1; i >= 0 && trusted(client); i--) {
    const hop = hops[i]!
    if (net.isIP(hop) === 0) break
    client = hop
  }
  return client
}
