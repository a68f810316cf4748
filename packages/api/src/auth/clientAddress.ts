import * as net from "node:net"

/** Whether an address belongs to one of the trusted reverse proxies. */
export type TrustedProxies = (address: string) => boolean

const unmapped = (address: string): string => (address.startsWith("::ffff:") && net.isIPv4(address.slice(7)) ? address.slice(7) : address)

/** A matcher for the `SVC_TRUSTED_PROXIES` entries (addresses or CIDR blocks). */
export const trustedProxiesOf = (entries: ReadonlyArray<string>): TrustedProxies => {
  if (entries.length === 0) return () => false
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
 * The client's address for per-address sign-in limits (SPEC 5.4), known only behind a trusted
 * proxy: the peer must be a trusted proxy, and the client is the right-most `X-Forwarded-For`
 * entry that is not one (entries further left are the client's own claims). Null otherwise:
 * without a trusted proxy every browser behind an ingress would look the same.
 */
export const clientAddressOf = (
  peer: string | undefined,
  forwardedFor: string | undefined,
  trusted: TrustedProxies
): string | null => {
  if (peer === undefined || !trusted(peer)) return null
  const hops = (forwardedFor ?? "").split(",").map((hop) => unmapped(hop.trim())).filter((hop) => hop.length > 0)
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = hops[i]!
    if (net.isIP(hop) === 0) return null
    if (!trusted(hop)) return hop
  }
  return null
}
