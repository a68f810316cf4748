/**
 * The pieces of the metrics that the process tests cannot drive cheaply: gateway start counting
 * around a Compute Driver (a real gateway start is minutes of work; the wrapper is ours and is
 * tested over a driver whose starts succeed, fail with a code, are not implemented, or die),
 * and the route template spelling.
 */
import { describe, expect, it } from "@effect/vitest"
import { ComputeFailure, ComputeNotImplemented, type ComputeDriverShape, meteredCompute } from "@svc/core/drivers/compute"
import { routeTemplate, SvcMetrics } from "@svc/core/observability"
import { Effect, Exit, Metric } from "effect"

const spec = {
  namespaceId: "ns_0123456789abcdef0123456789abcdef",
  agentId: "agt_1",
  revisionId: "rev_1",
  values: {},
  env: {}
} as unknown as Parameters<ComputeDriverShape["startGateway"]>[0]

const driverStarting = (start: ComputeDriverShape["startGateway"]): ComputeDriverShape => {
  const never = () => Effect.die("not used")
  return {
    id: "local",
    supportsExistingNamespace: false,
    provisionNamespace: never,
    teardownNamespace: never,
    startGateway: start,
    stopGateway: never,
    deleteGateway: never,
    gatewayHealth: never,
    diagnostics: never,
    readWorkspaceFile: never,
    writeWorkspaceFile: never,
    privateEndpoint: never,
    liveGateways: Effect.succeed([])
  }
}

const starts = Effect.map(Metric.value(Metric.tagged(SvcMetrics.gatewayStarts, "driver", "local")), (s) => s.count)
const failures = (code: string) =>
  Effect.map(
    Metric.value(Metric.tagged(Metric.tagged(SvcMetrics.gatewayStartFailures, "driver", "local"), "code", code)),
    (s) => s.count
  )

describe("gateway start metrics", () => {
  it.effect("a start that succeeds is counted as a start and not as a failure", () =>
    Effect.gen(function* () {
      const [before, failedBefore] = [yield* starts, yield* failures("INTERNAL_ERROR")]
      yield* meteredCompute(driverStarting(() => Effect.void)).startGateway(spec)
      expect((yield* starts) - before).toBe(1)
      expect((yield* failures("INTERNAL_ERROR")) - failedBefore).toBe(0)
    }))

  it.effect("a failed start is counted under its ComputeFailure code, and the failure is kept", () =>
    Effect.gen(function* () {
      const [before, failedBefore] = [yield* starts, yield* failures("GATEWAY_START_TIMEOUT")]
      const failure = new ComputeFailure({ code: "GATEWAY_START_TIMEOUT", message: "late", permanent: false })
      const exit = yield* Effect.exit(meteredCompute(driverStarting(() => Effect.fail(failure))).startGateway(spec))
      expect(exit).toEqual(Exit.fail(failure))
      expect((yield* starts) - before).toBe(1)
      expect((yield* failures("GATEWAY_START_TIMEOUT")) - failedBefore).toBe(1)
    }))

  it.effect("a driver without starts counts NOT_IMPLEMENTED, a defect INTERNAL_ERROR", () =>
    Effect.gen(function* () {
      const [notImplementedBefore, defectBefore] = [yield* failures("NOT_IMPLEMENTED"), yield* failures("INTERNAL_ERROR")]
      const missing = new ComputeNotImplemented({ driver: "local", method: "startGateway" })
      yield* Effect.exit(meteredCompute(driverStarting(() => Effect.fail(missing))).startGateway(spec))
      const died = yield* Effect.exit(meteredCompute(driverStarting(() => Effect.die("boom"))).startGateway(spec))
      expect(Exit.isFailure(died)).toBe(true)
      expect((yield* failures("NOT_IMPLEMENTED")) - notImplementedBefore).toBe(1)
      expect((yield* failures("INTERNAL_ERROR")) - defectBefore).toBe(1)
    }))

  it("leaves every other operation of the driver as it is", () => {
    const driver = driverStarting(() => Effect.void)
    const metered = meteredCompute(driver)
    expect(metered.stopGateway).toBe(driver.stopGateway)
    expect(metered.liveGateways).toBe(driver.liveGateways)
    expect(metered.id).toBe("local")
  })
})

describe("route templates", () => {
  it("spell path parameters as in the OpenAPI document", () => {
    expect(routeTemplate("/namespaces/:namespaceId/agents/:agentId")).toBe("/namespaces/{namespaceId}/agents/{agentId}")
    expect(routeTemplate("/healthz")).toBe("/healthz")
    expect(routeTemplate("/namespaces/:namespaceId/agents/:agentId/workspace/files/*")).toBe(
      "/namespaces/{namespaceId}/agents/{agentId}/workspace/files/*"
    )
  })
})
