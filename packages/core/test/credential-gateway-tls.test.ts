/**
 * The Credential Gateway Driver over TLS with bearer authentication, the configuration that needs
 * no `insecureTransport` (SPEC 2.15): `rootCertificatePath` is the trust root, and a gateway whose
 * certificate it does not trust is never sent the provider.
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import { makeCredentialGatewayClient } from "@svc/core/drivers/credentialGateway"
import { Effect } from "effect"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { startCredentialGateway } from "../../../testing/credentialGateway.js"
import { sandboxConfiguration } from "../../../testing/sandboxInstallation.js"

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "svc-gw-tls-"))
const selfSigned = (name: string) => {
  execFileSync("openssl", [
    "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=localhost",
    "-addext", "subjectAltName=DNS:localhost", "-keyout", path.join(dir, `${name}.key`), "-out", path.join(dir, `${name}.pem`)
  ], { stdio: "ignore" })
  return { key: fs.readFileSync(path.join(dir, `${name}.key`)), cert: fs.readFileSync(path.join(dir, `${name}.pem`)) }
}
const served = selfSigned("gateway")
selfSigned("stranger")
fs.writeFileSync(path.join(dir, "token"), "tls-bearer")
const gateway = await startCredentialGateway({ token: "tls-bearer", tls: served })

const clientTrusting = (rootCertificatePath: string) =>
  makeCredentialGatewayClient(sandboxConfiguration({
    endpoint: `localhost:${gateway.port}`,
    rootCertificatePath,
    auth: { mode: "bearerTokenFile", path: path.join(dir, "token") },
    requestTimeoutMs: 1000
  }))

describe("Credential Gateway Driver over TLS", () => {
  afterAll(() => gateway.stop())

  it.effect("registers and removes over TLS with the configured root certificate", () =>
    Effect.gen(function* () {
      const client = clientTrusting(path.join(dir, "gateway.pem"))
      yield* client.register({ name: "cs_tls", type: "modelvendor", labels: {}, config: {}, credentials: { api_key: "sk-tls" } })
      expect(gateway.providers.get("cs_tls")?.credentials).toEqual({ api_key: "sk-tls" })
      expect(yield* client.probe("cs_tls")).toBe("present")
      yield* client.remove("cs_tls")
      client.close()
    }))

  it.effect("does not talk to a gateway whose certificate the root does not sign", () =>
    Effect.gen(function* () {
      gateway.reset()
      const client = clientTrusting(path.join(dir, "stranger.pem"))
      const error = yield* Effect.flip(client.register({ name: "cs_mitm", type: "modelvendor", labels: {}, config: {}, credentials: { api_key: "sk-tls" } }))
      expect(error.outcome).toBe("noAnswer")
      expect(gateway.calls).toEqual([])
      expect(gateway.providers.size).toBe(0)
      client.close()
    }))
})
