/**
 * `svc gateway-pairing`: the `pairing` container of an Agent Pod on `kubernetes`
 * (docs/decisions/kubernetes.md "Device pairing"). It approves, on the Pod's loopback, the
 * gateway's pending pairing requests of the service's device id only (`runApprover`), configured
 * only by its container's environment; an environment it cannot run with stops it with exit 78,
 * naming the variable (never a value). It runs until stopped, reconnecting when the gateway restarts.
 */
import { NodeRuntime } from "@effect/platform-node"
import { loadOrExit } from "@svc/core/config"
import { pairingConfig, runApprover } from "@svc/core/drivers/compute"
import { Effect, Layer } from "effect"

const PairingProcess = Layer.scopedDiscard(
  Effect.gen(function* () {
    const config = yield* loadOrExit(pairingConfig)
    yield* Effect.logInfo("pairing: approving the service's device").pipe(Effect.annotateLogs({ deviceId: config.deviceId, scopes: config.scopes.join(",") }))
    yield* Effect.forkScoped(runApprover(config))
  })
)

PairingProcess.pipe(Layer.launch, (main) => NodeRuntime.runMain(main, { disablePrettyLogger: true }))
