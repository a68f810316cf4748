import { describe, expect, it } from "@effect/vitest"
import { clientAddressOf, trustedProxiesOf } from "../src/auth/clientAddress.js"

describe("the client address behind a trusted proxy (SPEC 5.4)", () => {
  const trusted = trustedProxiesOf(["10.0.0.0/8", "192.0.2.10", "fd00::/8"])!

  it("matches addresses and CIDR blocks, IPv4-mapped IPv6 included", () => {
    expect(trusted("10.1.2.3")).toBe(true)
    expect(trusted("::ffff:10.1.2.3")).toBe(true)
    expect(trusted("192.0.2.10")).toBe(true)
    expect(trusted("192.0.2.11")).toBe(false)
    expect(trusted("fd12::1")).toBe(true)
    expect(trusted("2001:db8::1")).toBe(false)
    expect(trusted("not an address")).toBe(false)
    expect(trustedProxiesOf([])).toBeNull()
  })

  it("is the right-most X-Forwarded-For hop that is not a trusted proxy", () => {
    expect(clientAddressOf("10.0.0.1", "203.0.113.7", trusted)).toBe("203.0.113.7")
    // Entries left of the first untrusted hop are the client's own claims.
    expect(clientAddressOf("10.0.0.1", "198.51.100.1, 203.0.113.7, 10.0.0.2", trusted)).toBe("203.0.113.7")
    expect(clientAddressOf("::ffff:10.0.0.1", "2001:db8::5", trusted)).toBe("2001:db8::5")
  })

  it("is the peer's own address when the peer is not a trusted proxy, whatever it forwards", () => {
    // A client that bypasses the ingress: its forged header is never read.
    expect(clientAddressOf("203.0.113.9", "198.51.100.1", trusted)).toBe("203.0.113.9")
    expect(clientAddressOf("203.0.113.9", "10.0.0.2", trusted)).toBe("203.0.113.9")
    expect(clientAddressOf("::ffff:203.0.113.9", undefined, trusted)).toBe("203.0.113.9")
    expect(clientAddressOf("2001:db8::9", "garbage", trusted)).toBe("2001:db8::9")
  })

  it("stops before a hop that is not an address, keeping the last verified one", () => {
    expect(clientAddressOf("10.0.0.1", "203.0.113.7, garbage", trusted)).toBe("10.0.0.1")
    expect(clientAddressOf("::ffff:10.0.0.1", "unknown", trusted)).toBe("10.0.0.1")
    expect(clientAddressOf("10.0.0.1", "203.0.113.7, garbage, 10.0.0.2", trusted)).toBe("10.0.0.2")
    expect(clientAddressOf("10.0.0.1", "203.0.113.7:4711", trusted)).toBe("10.0.0.1")
    expect(clientAddressOf("10.0.0.1", "evil, 203.0.113.7", trusted)).toBe("203.0.113.7")
  })

  it("is the left-most hop when every hop is a trusted proxy, or the peer without a header", () => {
    expect(clientAddressOf("10.0.0.1", "10.0.0.2, 10.0.0.3", trusted)).toBe("10.0.0.2")
    expect(clientAddressOf("10.0.0.1", undefined, trusted)).toBe("10.0.0.1")
    expect(clientAddressOf("10.0.0.1", " , ", trusted)).toBe("10.0.0.1")
  })

  it("is unknown without a trusted proxy configured or without a peer address", () => {
    expect(clientAddressOf("203.0.113.9", "198.51.100.1", null)).toBeNull()
    expect(clientAddressOf("10.0.0.1", "203.0.113.7", null)).toBeNull()
    expect(clientAddressOf(undefined, "198.51.100.1", trusted)).toBeNull()
  })
})
