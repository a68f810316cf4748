/**
 * The loopback Credential Gateway's egress (testing/credentialGateway.ts), as we assume OpenShell's
 * behaves (docs/decisions/kubernetes.md "Dedicated execution"): an HTTP forward proxy that takes
 * absolute-form requests, replaces a bearer `svc-credential-source:<provider name>` with the
 * `api_key` credential of the provider registered under that name, and forwards the request.
 * A request without a known placeholder is refused with 403 `unknown_placeholder`, and is never
 * forwarded.
 */
import * as http from "node:http"
import type { AddressInfo } from "node:net"

const PLACEHOLDER = /^Bearer svc-credential-source:(.+)$/

export interface CredentialEgress {
  /** `http://127.0.0.1:<port>`. */
  readonly url: string
  /** Every request seen: its target and the provider its placeholder named. */
  readonly requests: () => ReadonlyArray<{ readonly target: string; readonly provider: string | undefined }>
  readonly close: () => Promise<void>
}

export const startCredentialEgress = async (
  keyOf: (provider: string) => string | undefined
): Promise<CredentialEgress> => {
  const seen: Array<{ target: string; provider: string | undefined }> = []
  const server = http.createServer((req, res) => {
    const target = req.url ?? ""
    const provider = PLACEHOLDER.exec(req.headers.authorization ?? "")?.[1]
    seen.push({ target, provider })
    const key = provider === undefined ? undefined : keyOf(provider)
    if (key === undefined || !/^https?:\/\//.test(target)) {
      req.resume()
      const text = JSON.stringify({ error: { code: "unknown_placeholder", message: "No registered provider for this placeholder." } })
      res.writeHead(403, { "content-type": "application/json", "content-length": Buffer.byteLength(text) })
      return res.end(text)
    }
    const url = new URL(target)
    const headers: http.OutgoingHttpHeaders = { ...req.headers, host: url.host, authorization: `Bearer ${key}` }
    const upstream = http.request(url, { method: req.method, headers }, (reply) => {
      res.writeHead(reply.statusCode ?? 502, reply.headers)
      reply.pipe(res)
    })
    upstream.on("error", () => {
      if (res.headersSent) res.destroy()
      else res.writeHead(502).end()
    })
    req.pipe(upstream)
  })
  await new Promise<void>((resolve) => server.listen({ host: "127.0.0.1", port: 0 }, resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    requests: () => [...seen],
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}
