/**
 * Installation configuration fixtures shared by the configuration tests: one valid Backend of
 * each SPEC 2.15 type, the Drivers they need, and decoding helpers that return the problems as
 * `path: message` lines.
 */
import { decodeInstallationConfig } from "@svc/core/config"
import { Either } from "effect"
import { expect } from "vitest"

export const FILE = "/etc/svc/installation.json"

export const problems = (input: unknown): ReadonlyArray<string> =>
  Either.match(decodeInstallationConfig(FILE, input), {
    onLeft: (error) => error.problems.map((p) => `${p.path}: ${p.message}`),
    onRight: () => expect.fail("expected the file to be rejected")
  })

export const decoded = (input: unknown) =>
  Either.getOrElse(decodeInstallationConfig(FILE, input), (error) => expect.fail(error.message))

export const modelAccounts = {
  id: "models",
  type: "model_accounts",
  configuration: { workspaceId: "0b6f4e52-7c4f-4d1e-9a59-2d3f3c1b2a10", apiKeyPath: "/run/secrets/model-admin-key" },
  drivers: { serviceAccount: "model-accounts" }
}
export const codeHost = {
  id: "code",
  type: "code_host",
  configuration: { registryPath: "/etc/svc/registry.json" },
  drivers: { repo: "codehost" }
}
export const sandboxGateway = {
  id: "sandbox",
  type: "sandbox_gateway",
  configuration: {
    serviceName: "sandbox-gateway.svc.cluster.local",
    rootCertificatePath: "/etc/svc/sandbox-ca.pem",
    auth: { mode: "bearerTokenFile", path: "/run/secrets/sandbox-token" }
  },
  drivers: { sandbox: "sandbox", credentialGateway: "sandbox" }
}
export const fullDrivers = {
  compute: { id: "kubernetes", context: "prod" },
  serviceAccount: { id: "model-accounts" },
  repo: {
    id: "codehost",
    controlSocket: "/run/svc/credential-service.sock",
    sessionDurationSeconds: 3600,
    publicCaPath: "/etc/svc/public-ca.pem"
  },
  sandbox: { id: "sandbox" },
  credentialGateway: { id: "sandbox" }
}

/** Without the ServiceAccount Driver, which needs its model_accounts Backend. */
const { serviceAccount: _serviceAccount, ...withoutAccounts } = fullDrivers
export const driversWithoutAccounts = withoutAccounts
