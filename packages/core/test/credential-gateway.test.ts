/**
 * The Credential Gateway Driver against a loopback implementation of the gateway's gRPC service
 * (DESIGN §11): the happy path, each refusal, answers past `requestTimeoutMs`, lost answers,
 * restarts, and the bearer token read from its file at each call.
 */
import * as grpc from "@grpc/grpc-js"
import { afterAll, beforeEach, describe, expect, it } from "@effect/vitest"
import { CredentialGatewayError, makeCredentialGatewayClient } from "@svc/core/drivers/credentialGateway"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { startCredentialGateway } from "../../../testing/credentialGateway.js"
import { sandboxConfiguration } from "../../../testing/sandboxInstallation.js"

const gateway = await startCredentialGateway({ token: "gw-bearer-1" })
const tokenFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "svc-gw-")), "token")
fs.writeFileSync(tokenFile, "gw-bearer-1\n")

const configuration = (extra: object = {}) =>
  sandboxConfiguration({
    endpoint: gateway.endpoint,
    auth: { mode: "bearerTokenFile", path: tokenFile },
    requestTimeoutMs: 1000,
    insecureTransport: "network-policy",
    ...extra
  })

const client = makeCredentialGatewayClient(configuration())
const provider = (name: string) => ({
  name,
  type: "modelvendor",
  labels: { "svc/credential-source": name },
  config: { base_url: "https://models.example.com" },
  credentials: { api_key: "sk-loopback-value" }
})
const outcome = (effect: Effect.Effect<unknown, CredentialGatewayError>) =>
  Effect.map(Effect.flip(effect), (error) => ({ outcome: error.outcome, method: error.method }))

describe("Credential Gateway Driver over gRPC", () => {
  beforeEach(() => {
    gateway.reset()
    fs.writeFileSync(tokenFile, "gw-bearer-1\n")
  })
  afterAll(async () => {
    client.close()
    await gateway.stop()
  })

  it.effect("registers, probes and removes a provider, sending the bearer token", () =>
    Effect.gen(function* () {
      yield* client.register(provider("cs_a"))
      expect(gateway.providers.get("cs_a")).toEqual(provider("cs_a"))
      expect(yield* client.probe("cs_a")).toBe("present")
      yield* client.remove("cs_a")
      expect(yield* client.probe("cs_a")).toBe("absent")
      // Removing an absent provider counts as removed.
      yield* client.remove("cs_a")
      expect(gateway.calls.map((c) => c.method)).toEqual(["CreateProvider", "GetProvider", "DeleteProvider", "GetProvider", "DeleteProvider"])
    }))

  it.effect("reports the gateway's refusals as rejected (401, 403, 404, 429, 409, 400 equivalents)", () =>
    Effect.gen(function* () {
      for (const code of [grpc.status.UNAUTHENTICATED, grpc.status.PERMISSION_DENIED, grpc.status.NOT_FOUND, grpc.status.RESOURCE_EXHAUSTED, grpc.status.ALREADY_EXISTS, grpc.status.INVALID_ARGUMENT]) {
        gateway.next("CreateProvider", { kind: "status", code })
        expect(yield* outcome(client.register(provider("cs_b")))).toEqual({ outcome: "rejected", method: "CreateProvider" })
      }
      expect(gateway.providers.size).toBe(0)
      for (const code of [grpc.status.UNAUTHENTICATED, grpc.status.PERMISSION_DENIED, grpc.status.RESOURCE_EXHAUSTED]) {
        gateway.next("GetProvider", { kind: "status", code })
        expect(yield* outcome(client.probe("cs_b"))).toEqual({ outcome: "rejected", method: "GetProvider" })
        gateway.next("DeleteProvider", { kind: "status", code })
        expect(yield* outcome(client.remove("cs_b"))).toEqual({ outcome: "rejected", method: "DeleteProvider" })
      }
    }))

  it.effect("reads and deletes: 5xx equivalents, slow answers past requestTimeoutMs and lost answers are noAnswer; a lost delete is confirmed by the retry", () =>
    Effect.gen(function* () {
      yield* client.register(provider("cs_f"))
      for (const code of [grpc.status.INTERNAL, grpc.status.UNAVAILABLE, grpc.status.UNKNOWN]) {
        gateway.next("GetProvider", { kind: "status", code })
        expect(yield* outcome(client.probe("cs_f"))).toEqual({ outcome: "noAnswer", method: "GetProvider" })
      }
      gateway.next("GetProvider", { kind: "slow", ms: 1500 })
      expect(yield* outcome(client.probe("cs_f"))).toEqual({ outcome: "noAnswer", method: "GetProvider" })
      // A slow delete: the gateway removes it after our deadline; the retry finds it gone.
      gateway.next("DeleteProvider", { kind: "slow", ms: 1500 })
      expect(yield* outcome(client.remove("cs_f"))).toEqual({ outcome: "noAnswer", method: "DeleteProvider" })
      yield* client.remove("cs_f")
      expect(gateway.providers.has("cs_f")).toBe(false)
      // A lost delete: removed, the answer never came; the gateway restarts; the retry confirms.
      yield* client.register(provider("cs_g"))
      gateway.next("DeleteProvider", { kind: "lost" })
      expect(yield* outcome(client.remove("cs_g"))).toEqual({ outcome: "noAnswer", method: "DeleteProvider" })
      expect(gateway.providers.has("cs_g")).toBe(false)
      yield* Effect.promise(() => gateway.restart())
      yield* client.remove("cs_g")
      expect(gateway.calls.filter((c) => c.name === "cs_g").map((c) => c.method)).toEqual(["CreateProvider", "DeleteProvider", "DeleteProvider"])
      // A lost probe answer is no answer, and the gateway is reached again after its restart.
      yield* client.register(provider("cs_h"))
      gateway.next("GetProvider", { kind: "lost" })
      expect(yield* outcome(client.probe("cs_h"))).toEqual({ outcome: "noAnswer", method: "GetProvider" })
      yield* Effect.promise(() => gateway.restart())
      expect(yield* client.probe("cs_h")).toBe("present")
    }))

  it.effect("reads the token file at each call: a rotated token is used, a wrong one refused", () =>
    Effect.gen(function* () {
      fs.writeFileSync(tokenFile, "stale-token")
      expect(yield* outcome(client.register(provider("cs_c")))).toEqual({ outcome: "rejected", method: "CreateProvider" })
      fs.writeFileSync(tokenFile, "gw-bearer-1")
      yield* client.register(provider("cs_c"))
      fs.rmSync(tokenFile)
      expect(yield* outcome(client.probe("cs_c"))).toEqual({ outcome: "rejected", method: "GetProvider" })
      expect(gateway.calls.map((c) => c.method)).toEqual(["CreateProvider", "CreateProvider"])
    }))

  it.effect("reports 5xx equivalents, a slow answer past requestTimeoutMs and a lost answer as noAnswer", () =>
    Effect.gen(function* () {
      for (const code of [grpc.status.INTERNAL, grpc.status.UNAVAILABLE, grpc.status.UNKNOWN]) {
        gateway.next("CreateProvider", { kind: "status", code })
        expect(yield* outcome(client.register(provider("cs_d")))).toEqual({ outcome: "noAnswer", method: "CreateProvider" })
      }
      gateway.next("CreateProvider", { kind: "slow", ms: 1500 })
      expect(yield* outcome(client.register(provider("cs_slow")))).toEqual({ outcome: "noAnswer", method: "CreateProvider" })
      // The gateway acted all the same: the copy is there.
      expect(gateway.providers.has("cs_slow")).toBe(true)
      gateway.next("DeleteProvider", { kind: "status", code: grpc.status.UNAVAILABLE })
      expect(yield* outcome(client.remove("cs_slow"))).toEqual({ outcome: "noAnswer", method: "DeleteProvider" })
      gateway.next("CreateProvider", { kind: "lost" })
      expect(yield* outcome(client.register(provider("cs_lost")))).toEqual({ outcome: "noAnswer", method: "CreateProvider" })
      expect(gateway.providers.has("cs_lost")).toBe(true)
      // While the gateway is down, nothing answers; after its restart the same client works again.
      expect(yield* outcome(client.probe("cs_lost"))).toEqual({ outcome: "noAnswer", method: "GetProvider" })
      yield* Effect.promise(() => gateway.restart())
      expect(yield* client.probe("cs_lost")).toBe("present")
      yield* client.remove("cs_lost")
      yield* client.remove("cs_slow")
      expect(gateway.providers.size).toBe(0)
    }))

  it.effect("never puts gateway details in its errors", () =>
    Effect.gen(function* () {
      gateway.next("CreateProvider", { kind: "status", code: grpc.status.INTERNAL })
      const error = yield* Effect.flip(client.register(provider("cs_e")))
      expect(error).toBeInstanceOf(CredentialGatewayError)
      expect(error.message).toBe("The Credential Gateway gave no answer to CreateProvider.")
      expect(JSON.stringify(error)).not.toContain("sk-loopback-value")
    }))
})
