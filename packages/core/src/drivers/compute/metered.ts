/**
 * `svc_gateway_starts_total{driver}` and `svc_gateway_start_failures_total{driver,code}` for
 * whichever Compute Driver the Installation selects: counted around the driver's
 * `startGateway`, so every driver is measured the same way and none has to remember to.
 */
import { Effect, Layer, Metric } from "effect"
import * as SvcMetrics from "../../observability/metrics/instruments.js"
import { ComputeDriver, type ComputeDriverShape, type ComputeError } from "./driver.js"

/** The label of a start that died (a defect) instead of failing with a code. */
const DEFECT_CODE = "INTERNAL_ERROR"
const NOT_IMPLEMENTED_CODE = "NOT_IMPLEMENTED"

const codeOf = (error: ComputeError): string =>
  error._tag === "ComputeFailure" ? error.code : NOT_IMPLEMENTED_CODE

export const meteredCompute = (driver: ComputeDriverShape): ComputeDriverShape => {
  const starts = Metric.tagged(SvcMetrics.gatewayStarts, "driver", driver.id)
  const failed = (code: string) =>
    Metric.increment(Metric.tagged(Metric.tagged(SvcMetrics.gatewayStartFailures, "driver", driver.id), "code", code))
  return {
    ...driver,
    startGateway: (spec) =>
      Effect.zipRight(Metric.increment(starts), driver.startGateway(spec)).pipe(
        Effect.tapError((error) => failed(codeOf(error))),
        Effect.tapDefect(() => failed(DEFECT_CODE))
      )
  }
}

/** The driver `layer` provides, metered. */
export const metered = <E, R>(layer: Layer.Layer<ComputeDriver, E, R>): Layer.Layer<ComputeDriver, E, R> =>
  Layer.effect(ComputeDriver, Effect.map(ComputeDriver, meteredCompute)).pipe(Layer.provide(layer))
