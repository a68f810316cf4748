/**
 * Dedicated execution's harness as the drivers see it (docs/decisions/kubernetes.md "Dedicated
 * execution"): the rendering that points the gateway's providers at the harness, the Pod's
 * manifests (the credentials only in the harness Secret and container), the settings, who
 * receives which Secret (`deliveredSecrets`), and `local` refusing a harness spec.
 */
import { describe, expect, it } from "@effect/vitest"
import { decodeInstallationConfig } from "@svc/core/config"
import * as Compute from "@svc/core/drivers/compute"
import { NamespaceId } from "@svc/core/schema"
import { deliveredSecrets } from "@svc/core/tenancy"
import { Effect, Either, Exit, Redacted } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

const values = {
  models: {
    providers: {
      fake: { baseUrl: "http://127.0.0.1:4000/v1", api: "openai-completions", apiKey: { source: "env", provider: "default", id: "MODEL_API_KEY" } },
      "a b": { baseUrl: "https://models.example.com/v1", apiKey: "sk-in-values" },
      builtin: { api: "anthropic-messages" }
    },
    mode: "merge"
  },
  agents: { defaults: { model: "fake/fake-model" } }
}

const TOKEN = "harness-token-5e1f"
const spec: Compute.GatewaySpec = {
  namespaceId: NamespaceId.make(),
  agentId: "agt_1",
  revisionId: "rev_1",
  values,
  env: { GITHUB_TOKEN: Redacted.make("gh-value") },
  harness: { method: "direct_token", env: { SVC_HARNESS_TOKEN: Redacted.make(TOKEN) } }
}

interface Pod {
  spec: { template: { metadata: { annotations: Record<string, string> }; spec: { containers: Array<{ name: string; envFrom: unknown; env: Array<{ name: string; value: string }> }> } } }
}

describe("the harness rendering", () => {
  it("points every provider with a baseUrl at the harness with the placeholder; the originals go to the harness", () => {
    const rendered = Compute.renderHarnessValues(values)
    expect(rendered.upstreams).toEqual({ fake: "http://127.0.0.1:4000/v1", "a b": "https://models.example.com/v1" })
    expect(rendered.values).toEqual({
      ...values,
      models: {
        mode: "merge",
        providers: {
          fake: { ...values.models.providers.fake, baseUrl: "http://127.0.0.1:18790/providers/fake", apiKey: "svc-harness-placeholder" },
          "a b": { baseUrl: "http://127.0.0.1:18790/providers/a%20b", apiKey: "svc-harness-placeholder" },
          builtin: { api: "anthropic-messages" }
        }
      }
    })
    expect(Compute.renderHarnessValues({ agents: {} })).toEqual({ values: { agents: {}, models: { providers: {} } }, upstreams: {} })
  })
})

describe("the Pod of a dedicated revision", () => {
  const manifests = Compute.agentManifests(spec, "svc-ns", "gateway-token", {})
  const name = Compute.agentObjectName(spec.agentId)

  it("has the harness Secret alone with the credential; the gateway's Secret and config never do", () => {
    expect(manifests.harnessSecret).toEqual({
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: `${name}-harness`, namespace: "svc-ns", labels: manifests.secret.metadata?.labels },
      type: "Opaque",
      data: { SVC_HARNESS_TOKEN: Buffer.from(TOKEN).toString("base64") }
    })
    const gatewaySide = JSON.stringify([manifests.secret, manifests.configMap, manifests.deployment])
    expect(gatewaySide).not.toContain(TOKEN)
    expect(gatewaySide).not.toContain(Buffer.from(TOKEN).toString("base64"))
    expect((manifests.secret as unknown as { stringData: Record<string, string> }).stringData).toEqual({
      OPENCLAW_GATEWAY_TOKEN: "gateway-token",
      GITHUB_TOKEN: "gh-value"
    })
    const config = JSON.parse((manifests.configMap as unknown as { data: Record<string, string> }).data["openclaw.json"]!)
    expect(config.models.providers.fake.baseUrl).toBe("http://127.0.0.1:18790/providers/fake")
    expect(config.models.providers["a b"].apiKey).toBe("svc-harness-placeholder")
  })

  it("runs the harness container next to the gateway, each with its own Secret", () => {
    const containers = (manifests.deployment as unknown as Pod).spec.template.spec.containers
    expect(containers.map((c) => [c.name, c.envFrom])).toEqual([
      ["gateway", [{ secretRef: { name } }]],
      ["harness", [{ secretRef: { name: `${name}-harness` } }]]
    ])
    expect(containers[1]!.env).toEqual([
      { name: "SVC_HARNESS_LISTEN", value: "127.0.0.1:18790" },
      { name: "SVC_HARNESS_METHOD", value: "direct_token" },
      { name: "SVC_HARNESS_UPSTREAMS", value: JSON.stringify({ fake: "http://127.0.0.1:4000/v1", "a b": "https://models.example.com/v1" }) }
    ])
  })

  it("takes the configured image and resources, and rolls the Pod when only the harness credential changes", () => {
    const configured = Compute.agentManifests(spec, "svc-ns", "gateway-token", {
      harnessImage: "registry.example.com/svc:1.2.3",
      harnessResources: { cpuRequest: "10m", memoryLimit: "128Mi" }
    })
    const harness = (configured.deployment as unknown as { spec: { template: { spec: { containers: Array<{ image: string; resources: unknown }> } } } })
      .spec.template.spec.containers[1]!
    expect(harness.image).toBe("registry.example.com/svc:1.2.3")
    expect(harness.resources).toEqual({ requests: { cpu: "10m", memory: "64Mi" }, limits: { cpu: "500m", memory: "128Mi" } })
    const rotated = Compute.agentManifests({ ...spec, harness: { method: "direct_token", env: { SVC_HARNESS_TOKEN: Redacted.make("other") } } }, "svc-ns", "gateway-token", {})
    const annotation = (m: ReturnType<typeof Compute.agentManifests>) => (m.deployment as unknown as Pod).spec.template.metadata.annotations["svc/inputs"]
    expect(annotation(rotated)).not.toBe(annotation(manifests))
  })

  it("has neither harness Secret nor container without a harness, and renders the values as they are", () => {
    const plain = Compute.agentManifests({ ...spec, harness: undefined }, "svc-ns", "gateway-token", {})
    expect(plain.harnessSecret).toBeUndefined()
    expect((plain.deployment as unknown as Pod).spec.template.spec.containers.map((c) => c.name)).toEqual(["gateway"])
    expect((plain.configMap as unknown as { data: Record<string, string> }).data["openclaw.json"]).toBe(Compute.renderPodGatewayConfig(values))
  })
})

describe("who receives a revision's Secrets", () => {
  const bindings = { GITHUB_TOKEN: { source: { id: "sec_b" } } }
  it("a direct token goes to the harness only, an api_key to the gateway; the other methods deliver no Secret", () => {
    expect(deliveredSecrets(bindings, { method: "direct_token", source: { id: "sec_t" } })).toEqual([
      { destination: "GITHUB_TOKEN", secretId: "sec_b", to: "gateway" },
      { destination: "SVC_HARNESS_TOKEN", secretId: "sec_t", to: "harness" }
    ])
    expect(deliveredSecrets({}, { method: "api_key", source: { id: "sec_k" } })).toEqual([
      { destination: "MODEL_API_KEY", secretId: "sec_k", to: "gateway" }
    ])
    for (const method of ["provider_service_account", "credential_source", "runtime"]) expect(deliveredSecrets({}, { method })).toEqual([])
  })
})

describe("settings and the local driver", () => {
  it("decodes harnessImage and harnessResources and refuses a bad quantity with its path", () => {
    const compute = { id: "kubernetes", harnessImage: "registry.example.com/svc:1.2.3", harnessResources: { cpuRequest: "10m", memoryLimit: "128Mi" } }
    expect(Either.getOrThrow(decodeInstallationConfig("/f.json", { drivers: { compute } })).drivers.compute).toEqual(compute)
    const refused = decodeInstallationConfig("/f.json", { drivers: { compute: { ...compute, harnessResources: { cpuLimit: "lots" } } } })
    expect(Either.isLeft(refused) && refused.left.problems.map((p) => p.path)).toEqual(["drivers.compute.harnessResources.cpuLimit"])
  })

  it.effect("local refuses a spec with a harness: NOT_IMPLEMENTED, nothing started", () =>
    Effect.gen(function* () {
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "svc-harness-local-"))
      const exit = yield* Effect.exit(Compute.makeLocalCompute(dataDir).startGateway(spec))
      expect(exit).toEqual(Exit.fail(new Compute.ComputeNotImplemented({ driver: "local", method: "startGateway.harness" })))
      expect(fs.readdirSync(dataDir)).toEqual([])
    }))
})
