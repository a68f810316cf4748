/**
 * The `local` Compute Driver's Agent half: one real OpenClaw gateway process per Agent, under
 * `<dataDir>/namespaces/<nsId>/agents/<agentId>/` (`layout.ts`), on its own loopback port
 * (`ports.ts`), with its own token, environment (`environment.ts`) and rendered configuration
 * (`gatewayConfig.ts`), supervised through `gateway.json` (`gatewayProcess.ts`).
 *
 * Every method is an idempotent convergence step. A gateway is addressed by Agent and revision:
 * start, stop, health and endpoint act on the Agent's gateway only while it runs that revision;
 * delete removes the Agent's gateway and directories whatever revision they hold.
 */
import { randomBytes } from "node:crypto"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import { Duration, Effect, Redacted, Schedule } from "effect"
import {
  ComputeFailure,
  ComputeNotImplemented,
  type ComputeDriverShape,
  type DiagnosticsCheck,
  type GatewayHealth,
  type GatewayRef,
  type GatewaySpec
} from "../driver.js"
import { type Confinement, detectConfinement, launchCommand, usesGatewayUsers } from "./confinement.js"
import { explainRejectedConfig } from "./configValidation.js"
import { gatewayEnvironment, secretNameProblem } from "./environment.js"
import { renderGatewayConfig, serializeGatewayConfig } from "./gatewayConfig.js"
import {
  gatewayArgv,
  type GatewayRecord,
  isOurGateway,
  logTail,
  readRecord,
  spawnGateway,
  stopGroup,
  writeRecord
} from "./gatewayProcess.js"
import { ensureGatewayUser, type GatewayUser, gatewayUserName, removeGatewayUser } from "./gatewayUser.js"
import {
  type AgentLayout,
  agentLayout,
  isSafeSegment,
  makeTraversable,
  prepareAgentLayout,
  shareReadOnly,
  writePrivateFile
} from "./layout.js"
import { probeModel } from "./modelProbe.js"
import { assignPort, defaultPortRange, hostPortRegistry, type PortRange, releasePort } from "./ports.js"
import { awaitReady, probeHealth } from "./readiness.js"
import { groupCpuTicks } from "./processGroup.js"
import { isInstalled, locateRuntime, runtimePaths } from "./runtime.js"
import { failure, GatewayCodes, host, namespaceDir } from "./gatewayFailures.js"
import { workspaceFile, writeWorkspace } from "./workspaceFiles.js"
import { makeWorkspaceAccess } from "./gatewayWorkspace.js"
import { findLiveGateways } from "./liveGateways.js"
import { placePlugins } from "./pluginFiles.js"
import { withExportedSpan } from "../../../observability/spans.js"

export { GatewayCodes } from "./gatewayFailures.js"

export interface LocalGatewayOptions {
  readonly dataDir: string
  /** Where runtimes are installed (`SVC_RUNTIME_DIR`, default `<dataDir>/runtime`). */
  readonly runtimeRoot: string
  /**
   * The longest a start waits for `/readyz` while the gateway keeps working (default 10 min): a
   * busy host can take minutes, and a replacement would only start the wait over.
   */
  readonly readinessTimeout?: Duration.DurationInput | undefined
  /** A start is given up on sooner when the gateway used no CPU for this long (default 60 s). */
  readonly readinessStall?: Duration.DurationInput | undefined
  /** SIGTERM to SIGKILL (default 10 s; OpenClaw stops cleanly in under 4 s). */
  readonly stopGrace?: Duration.DurationInput | undefined
  readonly portRange?: PortRange | undefined
  /**
   * Where port claims are kept: host-wide by default (`hostPortRegistry`), so services or test
   * runs with different data dirs on one host never hand out the same port.
   */
  readonly portRegistry?: string | undefined
  /** How long the model probe may take (default 90 s). */
  readonly probeTimeout?: Duration.DurationInput | undefined
  /** How gateways are confined (default: what this host offers, `detectConfinement`). */
  readonly confinement?: Confinement | undefined
}

type AgentHalf = Pick<
  ComputeDriverShape,
  | "startGateway"
  | "stopGateway"
  | "deleteGateway"
  | "gatewayHealth"
  | "diagnostics"
  | "readWorkspaceFile"
  | "writeWorkspaceFile"
  | "privateEndpoint"
  | "liveGateways"
>

export const makeLocalGateways = (options: LocalGatewayOptions): AgentHalf => {
  const readinessTimeout = options.readinessTimeout ?? Duration.minutes(10)
  const readinessStall = options.readinessStall ?? Duration.seconds(60)
  const stopGraceMs = Duration.toMillis(options.stopGrace ?? Duration.seconds(10))
  const portRegistry = options.portRegistry ?? hostPortRegistry()
  // Detected once per driver, on first need (it runs the host's tools once).
  let detected: Promise<Confinement> | undefined
  const confinementNow = (): Promise<Confinement> =>
    options.confinement !== undefined ? Promise.resolve(options.confinement) : (detected ??= detectConfinement())

  /** The Agent's own user when gateways run as per-Agent users (created on demand). */
  const ownerOf = async (layout: AgentLayout): Promise<GatewayUser | undefined> =>
    usesGatewayUsers(await confinementNow()) ? ensureGatewayUser(gatewayUserName(layout.root), layout.root) : undefined

  const layoutOf = (ref: GatewayRef): Effect.Effect<AgentLayout, ComputeFailure> =>
    isSafeSegment(ref.agentId) && isSafeSegment(ref.namespaceId)
      ? Effect.succeed(agentLayout(namespaceDir(options.dataDir, ref.namespaceId), ref.agentId))
      : Effect.fail(failure(GatewayCodes.GATEWAY_SPEC_INVALID, "The Agent id cannot name a runtime directory.", true))

  /** The Agent's live gateway record for this revision, or `undefined`. */
  const running = (layout: AgentLayout, ref: GatewayRef) =>
    host("inspect", ref, async () => {
      const record = await readRecord(layout)
      if (record === undefined || record.revisionId !== ref.revisionId) return undefined
      return (await isOurGateway(record.pid, layout)) ? record : undefined
    })

  /** Stops the recorded gateway if it is still ours (never signals a reused pid), and notes it. */
  const stopRecorded = (layout: AgentLayout, ref: GatewayRef, record: GatewayRecord | undefined) =>
    Effect.gen(function* () {
      if (record === undefined) return
      const ours = yield* Effect.promise(() => isOurGateway(record.pid, layout))
      if (ours) {
        const how = yield* host("stop", ref, () => stopGroup(record.pid, stopGraceMs))
        yield* Effect.logInfo("local compute: gateway stopped", { agentId: ref.agentId, pid: record.pid, how })
      }
      if (record.stoppedAt === undefined) {
        yield* host("stop", ref, () => writeRecord(layout, { ...record, stoppedAt: new Date().toISOString() }))
      }
    })

  const endpointOf = (record: GatewayRecord) => ({ url: `http://127.0.0.1:${record.port}`, token: record.token })

  const exitedWhileAdopted = (layout: AgentLayout, pid: number) =>
    Effect.promise(() => isOurGateway(pid, layout)).pipe(
      Effect.repeat({ schedule: Schedule.spaced(Duration.seconds(1)), while: (alive) => alive }),
      Effect.as({ code: null })
    )

  const validateSpec = (spec: GatewaySpec): Effect.Effect<void, ComputeFailure> => {
    const problems = Object.keys(spec.env).flatMap((name) => {
      const problem = secretNameProblem(name)
      return problem === undefined ? [] : [`${name}: ${problem}`]
    })
    const valuesOk = typeof spec.values === "object" && spec.values !== null && !Array.isArray(spec.values)
    return problems.length === 0 && valuesOk
      ? Effect.void
      : Effect.logWarning("local compute: gateway spec refused", { agentId: spec.agentId, problems, valuesOk }).pipe(
        Effect.zipRight(
          Effect.fail(
            failure(GatewayCodes.GATEWAY_SPEC_INVALID, "The Agent's configuration or Secret variable names cannot be used.", true)
          )
        )
      )
  }

  /** Waits for readiness and turns every way it can end into the driver's answer. */
  const settleStart = (
    layout: AgentLayout,
    spec: GatewaySpec,
    record: GatewayRecord,
    exited: Effect.Effect<{ readonly code: number | null }>,
    explainRejection: Effect.Effect<void> = Effect.void
  ) =>
    Effect.gen(function* () {
      const progress = Effect.promise(() => groupCpuTicks(record.pid))
      const readiness = yield* awaitReady(record.port, {
        budget: { limit: readinessTimeout, stall: readinessStall, progress },
        exited
      })
      if (readiness._tag === "Ready") return new Date().toISOString()
      if (readiness._tag === "Exited" && readiness.code === 78) yield* explainRejection
      const tail = yield* Effect.promise(() => logTail(layout))
      yield* Effect.logWarning("local compute: gateway did not become ready", {
        agentId: spec.agentId,
        revisionId: spec.revisionId,
        outcome: readiness._tag,
        exitCode: readiness._tag === "Exited" ? readiness.code : undefined,
        reason: readiness._tag === "TimedOut" ? readiness.reason : undefined,
        log: tail
      })
      if (readiness._tag === "TimedOut") {
        yield* stopRecorded(layout, spec, record)
        return yield* failure(GatewayCodes.GATEWAY_START_TIMEOUT, "The gateway did not become ready in time.", false)
      }
      if (readiness.code === 78) {
        return yield* failure(
          GatewayCodes.GATEWAY_CONFIG_REJECTED,
          "The gateway rejected its configuration (an unknown or invalid key in the Configuration values).",
          true
        )
      }
      return yield* failure(GatewayCodes.GATEWAY_EXITED, "The gateway exited while starting.", false)
    })

  const probe = (layout: AgentLayout, spec: GatewaySpec, record: GatewayRecord) =>
    Effect.gen(function* () {
      if (spec.modelProbe === undefined) return
      const result = yield* probeModel(endpointOf(record), { model: spec.modelProbe.model, timeout: options.probeTimeout })
      if (result._tag === "Succeeded") return
      yield* Effect.logWarning("local compute: model probe failed", { agentId: spec.agentId, ...result })
      if (result._tag === "AuthenticationFailed") {
        yield* stopRecorded(layout, spec, record)
        return yield* failure(
          GatewayCodes.RUNTIME_AUTHENTICATION_FAILED,
          "The model provider rejected the Agent's credential.",
          true
        )
      }
      return yield* failure(GatewayCodes.MODEL_PROBE_FAILED, "The gateway could not complete a model request.", false)
    })

  /**
   * Keeps when the gateway became ready and passed its checks in its record: the gateway's own
   * share of a deployment, which `bench:agents` subtracts to time the control plane alone.
   */
  const noteChecked = (layout: AgentLayout, ref: GatewayRef, record: GatewayRecord) =>
    host("record", ref, () => writeRecord(layout, { ...record, checkedAt: new Date().toISOString() }))

  const startGateway: AgentHalf["startGateway"] = (spec) =>
    Effect.gen(function* () {
      // Dedicated execution's harness is not offered here (admission refuses it with 409).
      if (spec.harness !== undefined) return yield* new ComputeNotImplemented({ driver: "local", method: "startGateway.harness" })
      const layout = yield* layoutOf(spec)
      yield* validateSpec(spec)
      const runtime = yield* locateRuntime(options.runtimeRoot)
      const nsExists = yield* Effect.promise(() => fs.stat(path.dirname(path.dirname(layout.root))).then(() => true, () => false))
      if (!nsExists) {
        return yield* failure(GatewayCodes.NAMESPACE_RUNTIME_MISSING, "The Namespace's runtime directory is not provisioned yet.", false)
      }
      const adopted = yield* running(layout, spec)
      if (adopted !== undefined) {
        yield* Effect.logInfo("local compute: adopting running gateway", { agentId: spec.agentId, pid: adopted.pid })
        const readyAt = yield* settleStart(layout, spec, adopted, exitedWhileAdopted(layout, adopted.pid))
        yield* probe(layout, spec, adopted)
        return yield* noteChecked(layout, spec, { ...adopted, readyAt })
      }
      yield* stopRecorded(layout, spec, yield* host("read", spec, () => readRecord(layout)))
      const record = yield* host("spawn", spec, async () => {
        const confinement = await confinementNow()
        const owner = await ownerOf(layout)
        await prepareAgentLayout(layout, owner)
        if (confinement.kind === "pid-namespace") {
          // No mount namespace hides the way: the user needs search (never read) on the parents.
          await makeTraversable(path.dirname(layout.root))
          await makeTraversable(runtime.directory)
        }
        for (const [name, content] of Object.entries(spec.initialFiles ?? {})) {
          const file = workspaceFile(layout.workspace, name)
          if (file !== undefined) await writeWorkspace(layout.workspace, file, new TextEncoder().encode(content), owner)
        }
        const port = await assignPort({
          registry: portRegistry,
          owner: layout.root,
          portFile: layout.portFile,
          range: options.portRange ?? defaultPortRange
        })
        const token = randomBytes(32).toString("base64url")
        const config = renderGatewayConfig(spec.values as Record<string, unknown>, {
          port,
          workspace: layout.workspace,
          logFile: path.join(layout.logs, "openclaw.log"),
          plugins: await placePlugins(layout, spec.plugins ?? [])
        })
        await writePrivateFile(layout.configFile, serializeGatewayConfig(config))
        if (owner !== undefined) await shareReadOnly(layout.configFile, owner)
        const env = gatewayEnvironment({
          layout,
          nodeBinDir: path.dirname(runtime.node),
          token: Redacted.make(token),
          secrets: spec.env
        })
        const launch = await launchCommand(
          confinement,
          { runtimeDirectory: runtime.directory, agentRoot: layout.root, workspace: layout.workspace, user: owner },
          gatewayArgv(runtime, port)
        )
        const spawned = await spawnGateway({ launch, layout, port, env })
        const record: GatewayRecord = { pid: spawned.pid, port, revisionId: spec.revisionId, token, startedAt: new Date().toISOString() }
        await writeRecord(layout, record)
        const explain = () => explainRejectedConfig({ confinement, runtime, layout, owner })
        return { record, exited: spawned.exited, explain, confinement: confinement.kind, user: owner?.name }
      })
      yield* Effect.logInfo("local compute: gateway started", {
        agentId: spec.agentId,
        pid: record.record.pid,
        port: record.record.port,
        confinement: record.confinement,
        user: record.user
      })
      const readyAt = yield* settleStart(
        layout,
        spec,
        record.record,
        Effect.promise(() => record.exited),
        Effect.promise(() => record.explain().catch(() => undefined))
      )
      yield* probe(layout, spec, record.record)
      yield* noteChecked(layout, spec, { ...record.record, readyAt })
    }).pipe(withExportedSpan("LocalCompute.startGateway", { attributes: { agentId: spec.agentId, revisionId: spec.revisionId } }))

  const stopGateway: AgentHalf["stopGateway"] = (ref) =>
    Effect.gen(function* () {
      const layout = yield* layoutOf(ref)
      const record = yield* host("read", ref, () => readRecord(layout))
      if (record === undefined || record.revisionId !== ref.revisionId) return
      yield* stopRecorded(layout, ref, record)
    }).pipe(withExportedSpan("LocalCompute.stopGateway", { attributes: { agentId: ref.agentId } }))

  const deleteGateway: AgentHalf["deleteGateway"] = (ref) =>
    Effect.gen(function* () {
      const layout = yield* layoutOf(ref)
      yield* stopRecorded(layout, ref, yield* host("read", ref, () => readRecord(layout)))
      yield* host("delete", ref, async () => {
        const port = Number.parseInt((await fs.readFile(layout.portFile, "utf8").catch(() => "")) || "", 10)
        if (Number.isInteger(port)) await releasePort(portRegistry, layout.root, port)
        await fs.rm(layout.root, { recursive: true, force: true })
        // The Agent's user goes with its files (its processes went with the stop above).
        if (usesGatewayUsers(await confinementNow())) await removeGatewayUser(gatewayUserName(layout.root))
      })
    }).pipe(withExportedSpan("LocalCompute.deleteGateway", { attributes: { agentId: ref.agentId } }))

  const gatewayHealth: AgentHalf["gatewayHealth"] = (ref) =>
    Effect.gen(function* () {
      const layout = yield* layoutOf(ref)
      const record = yield* host("read", ref, () => readRecord(layout))
      if (record === undefined || record.revisionId !== ref.revisionId) return "absent" as GatewayHealth
      if (!(yield* Effect.promise(() => isOurGateway(record.pid, layout)))) return "stopped"
      const health = yield* probeHealth(record.port)
      if (health.ready) return "healthy"
      const age = Date.now() - Date.parse(record.startedAt)
      return age < Duration.toMillis(readinessTimeout) ? "starting" : "unhealthy"
    })

  const diagnostics: AgentHalf["diagnostics"] = (ref) =>
    Effect.gen(function* () {
      const layout = yield* layoutOf(ref)
      const installed = yield* Effect.promise(() => isInstalled(runtimePaths(options.runtimeRoot)))
      const record = yield* running(layout, ref)
      const health = record === undefined ? { live: false, ready: false } : yield* probeHealth(record.port)
      const check = (name: string, ok: boolean, passed: string, failed: string): DiagnosticsCheck => ({
        name,
        status: ok ? "pass" : "fail",
        message: ok ? passed : failed
      })
      return [
        check("runtime.installed", installed, "The gateway runtime is installed.", "The gateway runtime is not installed."),
        check("gateway.process", record !== undefined, "The gateway process runs this revision.", "No gateway process runs this revision."),
        check("gateway.live", health.live, "The gateway answers /healthz.", "The gateway does not answer /healthz."),
        check("gateway.ready", health.ready, "The gateway answers /readyz.", "The gateway is not ready.")
      ]
    })

  const { readWorkspaceFile, writeWorkspaceFile } = makeWorkspaceAccess(layoutOf, ownerOf)

  const privateEndpoint: AgentHalf["privateEndpoint"] = (ref) =>
    Effect.gen(function* () {
      const layout = yield* layoutOf(ref)
      const record = yield* running(layout, ref)
      if (record === undefined) {
        return yield* failure(GatewayCodes.GATEWAY_NOT_RUNNING, "No gateway runs this revision.", false)
      }
      return endpointOf(record)
    })

  const liveGateways = findLiveGateways(options.dataDir)

  return {
    liveGateways,
    startGateway,
    stopGateway,
    deleteGateway,
    gatewayHealth,
    diagnostics,
    readWorkspaceFile,
    writeWorkspaceFile,
    privateEndpoint
  }
}
