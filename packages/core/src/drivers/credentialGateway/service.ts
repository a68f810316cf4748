/**
 * The selected Credential Gateway (SPEC 2.15): present only when `drivers.credentialGateway` is
 * selected and a `sandbox_gateway` Backend carries its connection. The gRPC channel connects
 * lazily, so building this never calls the gateway.
 */
import { Effect } from "effect"
import { InstallationConfiguration } from "../../config/load.js"
import { type CredentialGatewayClient, makeCredentialGatewayClient } from "./client.js"

export class CredentialGateway extends Effect.Service<CredentialGateway>()("@svc/core/drivers/CredentialGateway", {
  scoped: Effect.gen(function* () {
    const installation = yield* InstallationConfiguration
    const backend = installation.backends.find((b) => b.type === "sandbox_gateway")
    if (installation.drivers.credentialGateway === undefined || backend?.type !== "sandbox_gateway") {
      return { client: undefined as CredentialGatewayClient | undefined }
    }
    const client = yield* Effect.acquireRelease(
      Effect.sync(() => makeCredentialGatewayClient(backend.configuration)),
      (c) => Effect.sync(() => c.close())
    )
    return { client: client as CredentialGatewayClient | undefined }
  })
}) {}
