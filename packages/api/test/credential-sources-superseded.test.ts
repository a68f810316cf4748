/**
 * A DELETE that takes a credential source while its registration is still on its way to the
 * Credential Gateway (SPEC 3: `registering` → DELETE → `deleting`, then removed). The DELETE finds
 * no copy at the gateway and removes the record; the registration then arrives and is accepted.
 * Nothing would remove that copy later (the sweep goes by the records), so the request that
 * registered it removes it before it answers.
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Schedule, TestServices } from "effect"
import { startCredentialGateway } from "../../../testing/credentialGateway.js"
import { TestServer } from "../../../testing/server.js"
import { GATEWAY_TOKEN, gatewayInstallation, sourceRows } from "./support/credentialGatewayWorld.js"
import { apiTestLayer, auditKinds, expectData, expectError, seedAdmin, seedNamespace, send } from "./support/iamServer.js"

const gateway = await startCredentialGateway({ token: GATEWAY_TOKEN })
const loopback = gatewayInstallation(gateway)
// The longest request timeout: the held registration is answered, not timed out, however loaded the host.
const installation = {
  ...loopback,
  backends: loopback.backends.map((b) => b.type === "sandbox_gateway" ? { ...b, configuration: { ...b.configuration, requestTimeoutMs: 30_000 } } : b)
}

describe("Credential sources: DELETE during registration", () => {
  afterAll(() => gateway.stop())

  it.layer(apiTestLayer(installation), { timeout: 120_000 })((it) => {
    it.effect("the copy the gateway accepts after the DELETE is removed there too; nothing is left anywhere", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* TestServer
        const admin = yield* seedAdmin("cs-superseded@example.com")
        const ns = yield* seedNamespace("cs-superseded")
        const call = (method: string, path: string, body?: unknown) => send(baseUrl, method, `/namespaces/${ns}/${path}`, admin.headers, body)
        const secret = expectData(yield* call("POST", "secrets", { name: "vendor-key", value: "sk-superseded-0123456789" }), 201)
        let release = () => {}
        gateway.next("CreateProvider", { kind: "held", until: new Promise<void>((resolve) => { release = resolve }) })
        const create = yield* Effect.fork(call("POST", "credential-sources", {
          name: "vendor-key",
          type: "modelvendor",
          secrets: { api_key: { kind: "secret", namespaceId: ns, id: secret.id } }
        }))
        // Polled on the real clock (a test's default clock never advances by itself).
        yield* TestServices.provideLive(Effect.repeat(Effect.sync(() => gateway.calls.some((c) => c.method === "CreateProvider")), {
          until: (arrived) => arrived,
          schedule: Schedule.spaced("20 millis")
        }))
        const [registering] = yield* sourceRows
        expect(registering).toEqual({ id: expect.any(String), state: "registering" })

        const deleted = yield* call("DELETE", `credential-sources/${registering!.id}`)
        expect(deleted.status).toBe(204)
        expect(yield* sourceRows).toEqual([])
        release()
        expectError(yield* Fiber.join(create), 503, "DEPENDENCY_UNAVAILABLE")

        expect(gateway.providers.size).toBe(0)
        expect(yield* sourceRows).toEqual([])
        expect((yield* auditKinds(registering!.id)).map((row) => row.kind)).toEqual([
          "credential_source.created",
          "credential_source.deleted",
          "credential_source.registration_failed"
        ])
      }))
  })
})
