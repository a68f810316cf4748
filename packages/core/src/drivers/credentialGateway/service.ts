/**
 * The selected Credential Gateway (SPEC 2.15), as a Driver tag: `client` is present only when
 * `drivers.credentialGateway` is selected and a `sandbox_gateway` Backend carries its
 * connection. `fromInstallation` builds it from the Installation configuration; the gRPC
 * channel connects lazily, so building it never calls the gateway.
 */
import { Context, Effect, Layer } from "effect"
import { InstallationConfiguration } from "../../config/load.js"
import { type CredentialGatewayClient, makeCredentialGatewayClient } from "./client.js"

export class CredentialGateway extends Context.Tag("@svc/core/drivers/CredentialGateway")<
  CredentialGateway,
  { readonly client: CredentialGatewayClient | undefined }
>() {
  static readonly fromInstallation = Layer.scoped(
    CredentialGateway,
    Effect.gen(function* () {
      const installation = yield* InstallationConfiguration
      const backend = installation.backends.find((b) => b.type === "sandbox_gateway")
      if (installation.drivers.credentialGateway === undefined || backend?.type !== "sandbox_gateway") return { client: undefined }
      const client = yield* Effect.acquireRelease(
        Effect.sync(() => makeCredentialGatewayClient(backend.configuration)),
        (c) => Effect.sync(() => c.close())
      )
      return { client }
    })
  )
}
