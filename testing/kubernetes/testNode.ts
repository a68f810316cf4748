/**
 * The test node: what a kubelet does, for a cluster where none runs (../shared/k8s/README.md).
 * It registers a Ready Node, binds the pending Pods of the namespaces it is given, and runs each
 * bound Pod's gateway container as a local process of the pinned runtime (the "image"): the
 * container's environment with its Secret's values, `openclaw.json` from its ConfigMap, the
 * Pod's mounts as directories of this node (its volume per PersistentVolumeClaim, so state
 * outlives a Pod), on a loopback port. It reports the Pod Running, and Ready once the gateway's
 * `/readyz` answers, through the API as a kubelet would; deleted Pods are stopped and removed.
 * Pod IPs are data from 192.0.2.0/24 (never contacted); the service reaches a Pod through
 * `resolver`, the loopback port. These are the only substitutions: everything else is the real
 * API server and controllers.
 *
 * A Pod's `harness` container (dedicated execution, `args: ["harness"]`) runs as a local process
 * of our built `svc harness` (its image maps to our own entry point, as the gateway's maps to the
 * pinned runtime) with only that container's environment. A Pod's containers share one network
 * namespace in a cluster, where the harness listens on the Pod's 127.0.0.1:18790; here every
 * Pod's harness gets a free loopback port instead, rewritten consistently in its listen address
 * and in the gateway's `openclaw.json` (the provider base URLs that point at the harness).
 * The `pairing` container (`args: ["gateway-pairing"]`) runs the same way, `svc gateway-pairing`,
 * its gateway address rewritten to the Pod's gateway port (a cluster's 127.0.0.1:18789); the
 * gateway trusts this node's loopback as a proxy (`behindLoopbackProxy`) so that the service's
 * forwarded requests are remote to it, as they are in a cluster.
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import * as Compute from "@svc/core/drivers/compute"
import { freePort } from "@svc/core/embedded-postgres"
import { Effect } from "effect"
import { loopbackResolver, type PodEndpoint, writePodEndpoints } from "./loopbackResolver.js"
import { type ProjectedVolume, projectVolumes } from "./podVolumes.js"
import { repositoryRoot } from "../process.js"

interface ContainerLike {
  name: string
  image: string
  command?: Array<string>
  args?: Array<string>
  env?: Array<{ name: string; value?: string; valueFrom?: { secretKeyRef?: { name: string; key: string } } }>
  envFrom?: Array<{ secretRef?: { name: string } }>
  volumeMounts?: Array<{ name: string; mountPath: string }>
}

interface PodLike {
  metadata: { name: string; namespace: string; uid: string; labels?: Record<string, string>; deletionTimestamp?: string }
  spec: {
    nodeName?: string
    initContainers?: Array<ContainerLike>
    containers: Array<ContainerLike>
    volumes?: Array<ProjectedVolume>
  }
  status?: Record<string, unknown>
}

interface Running {
  readonly pod: PodLike
  readonly port: number
  /** The harness's loopback port (standing in for the Pod's 127.0.0.1:18790). */
  readonly harnessPort: number
  readonly ip: string
  child: ChildProcess | undefined
  harness: ChildProcess | undefined
  pairing: ChildProcess | undefined
  ready: boolean
  restarts: number
  readonly startedAt: string
}

export interface TestNodeOptions {
  readonly name: string
  readonly workDir: string
  /** Only Pods of these Kubernetes namespaces are bound (other test files share the cluster). */
  readonly owns: (namespace: string) => boolean
  /** Don't run the gateway (the Pod stays Running, never Ready): a start that never converges. */
  readonly neverReady?: (pod: { readonly namespace: string; readonly labels: Record<string, string> }) => boolean
  /** Writes the running Pods' loopback ports here after every pass (for `fileResolver` in another process). */
  readonly endpointsFile?: string | undefined
}

export interface TestNode {
  readonly resolver: Compute.EndpointResolver
  /** The gateway processes this node runs, by Pod name. */
  readonly processes: () => ReadonlyMap<string, {
    readonly pid: number | undefined
    readonly port: number
    readonly ready: boolean
    /** The `harness` container's process, when the Pod has one. */
    readonly harnessPid: number | undefined
    /** The `pairing` container's process, when the Pod has one. */
    readonly pairingPid: number | undefined
  }>
  readonly stop: () => Promise<void>
}

/**
 * The one change to the gateway's configuration: this node's loopback is a trusted proxy, so a
 * client sending `X-Forwarded-For` (the tests' driver, `clusterClientHeaders`) is seen as the
 * remote address it names, as a cluster client is; a plain loopback client (the `pairing`
 * container) stays local, as it is on the Pod's 127.0.0.1.
 */
const behindLoopbackProxy = (config: unknown): unknown => {
  const document = config as { gateway?: Record<string, unknown> }
  return { ...document, gateway: { ...document.gateway, trustedProxies: ["127.0.0.1/32"] } }
}

const run = <A>(effect: Effect.Effect<A, unknown>) => Effect.runPromise(effect)
const now = () => new Date().toISOString().replace(/\.\d+Z$/, "Z")

export const startTestNode = async (cluster: Compute.Cluster, options: TestNodeOptions): Promise<TestNode> => {
  const runtime = Compute.runtimePaths(process.env.SVC_RUNTIME_DIR ?? path.resolve(import.meta.dirname, "..", "..", ".svc-data", "runtime"))
  const send = (request: Parameters<Compute.Cluster["send"]>[0]) => run(cluster.send(request))
  await send({
    method: "POST",
    path: "/api/v1/nodes",
    body: { apiVersion: "v1", kind: "Node", metadata: { name: options.name, labels: { "kubernetes.io/hostname": options.name } } }
  }).catch(() => undefined)
  const node = (await send({ method: "GET", path: `/api/v1/nodes/${options.name}` })) as Record<string, unknown>
  await send({
    method: "PUT",
    path: `/api/v1/nodes/${options.name}/status`,
    body: {
      ...node,
      status: {
        capacity: { cpu: "16", memory: "64Gi", pods: "110" },
        allocatable: { cpu: "16", memory: "64Gi", pods: "110" },
        conditions: [{ type: "Ready", status: "True", reason: "KubeletReady", message: "test node", lastHeartbeatTime: now(), lastTransitionTime: now() }],
        addresses: [{ type: "InternalIP", address: "192.0.2.1" }, { type: "Hostname", address: options.name }]
      }
    }
  })

  const running = new Map<string, Running>()
  let nextIp = 10
  let stopped = false

  const hostPath = (pod: PodLike, volume: string): string => {
    const spec = pod.spec.volumes?.find((candidate) => candidate.name === volume)
    const claim = spec?.persistentVolumeClaim?.claimName
    const dir = claim !== undefined
      ? path.join(options.workDir, "volumes", pod.metadata.namespace, claim)
      : path.join(options.workDir, "pods", pod.metadata.uid, volume)
    fs.mkdirSync(dir, { recursive: true })
    return dir
  }

  /** Container paths to this node's directories, longest mount first. */
  const mapper = (pod: PodLike, container: ContainerLike) => {
    const mounts = (container.volumeMounts ?? [])
      .map((mount) => ({ from: mount.mountPath, to: hostPath(pod, mount.name) }))
      .sort((a, b) => b.from.length - a.from.length)
    const map = (value: string) => {
      const mount = mounts.find((candidate) => value === candidate.from || value.startsWith(`${candidate.from}/`))
      return mount === undefined ? value : `${mount.to}${value.slice(mount.from.length)}`
    }
    const deep = (value: unknown): unknown =>
      typeof value === "string" ? map(value)
      : Array.isArray(value) ? value.map(deep)
      : typeof value === "object" && value !== null ? Object.fromEntries(Object.entries(value).map(([k, v]) => [k, deep(v)]))
      : value
    return { map, deep }
  }

  /** A container's environment and its projected ConfigMap files, on this node's paths. */
  const prepare = async (pod: PodLike, container: ContainerLike, harnessPort?: number) => {
    const paths = mapper(pod, container)
    const env: Record<string, string> = { PATH: `${path.dirname(runtime.node)}:/usr/bin:/bin` }
    for (const source of container.envFrom ?? []) {
      if (source.secretRef === undefined) continue
      const secret = (await send({ method: "GET", path: `/api/v1/namespaces/${pod.metadata.namespace}/secrets/${source.secretRef.name}` })) as {
        data?: Record<string, string>
      }
      for (const [key, value] of Object.entries(secret.data ?? {})) env[key] = Buffer.from(value, "base64").toString("utf8")
    }
    for (const variable of container.env ?? []) {
      if (variable.value !== undefined) env[variable.name] = paths.map(variable.value)
      const ref = variable.valueFrom?.secretKeyRef
      if (ref === undefined) continue
      const secret = (await send({ method: "GET", path: `/api/v1/namespaces/${pod.metadata.namespace}/secrets/${ref.name}` })) as { data?: Record<string, string> }
      const value = secret.data?.[ref.key]
      if (value !== undefined) env[variable.name] = Buffer.from(value, "base64").toString("utf8")
    }
    // The ConfigMap and Secret volumes: their keys become files, as the kubelet projects them.
    await projectVolumes(send, pod.metadata.namespace, pod.spec.volumes ?? [], (volume) => hostPath(pod, volume), (key, value) => {
      if (key !== "openclaw.json") return value
      const text = JSON.stringify(behindLoopbackProxy(paths.deep(JSON.parse(value))), null, 2)
      const origin = Compute.harnessOrigin()
      return harnessPort === undefined ? text : text.replaceAll(`${origin}/`, `${Compute.harnessOrigin(harnessPort)}/`)
    })
    return env
  }

  /** Init containers run in order to completion with the image's Node.js (`command: ["node", ...]`). */
  const runInit = async (pod: PodLike): Promise<boolean> => {
    for (const container of pod.spec.initContainers ?? []) {
      const env = await prepare(pod, container)
      const [program, ...args] = container.command ?? []
      if (program !== "node") return false
      const child = spawn(runtime.node, args, { env, stdio: "ignore" })
      const code = await new Promise<number | null>((resolve) => child.once("exit", resolve))
      if (code !== 0) return false
    }
    return true
  }

  const isHarness = (container: ContainerLike) => container.args?.[0] === "harness"
  const isPairing = (container: ContainerLike) => container.args?.[0] === "gateway-pairing"
  const isSidecar = (container: ContainerLike) => isHarness(container) || isPairing(container)

  /** A container of our image: `svc <args>` with its own environment (`local` overriding it). */
  const launchSvc = async (entry: Running, container: ContainerLike, local: Record<string, string>) => {
    const env = { ...(await prepare(entry.pod, container)), ...local }
    const log = fs.openSync(path.join(options.workDir, `${entry.pod.metadata.name}.${container.name}.log`), "a")
    const child = spawn(process.execPath, [path.join(repositoryRoot, "scripts/svc.mjs"), ...(container.args ?? [])], {
      cwd: repositoryRoot,
      env,
      detached: true,
      stdio: ["ignore", log, log]
    })
    fs.closeSync(log)
    return child
  }

  const launch = async (entry: Running) => {
    const pod = entry.pod
    const container = pod.spec.containers.find((candidate) => !isSidecar(candidate))!
    const harness = pod.spec.containers.find(isHarness)
    const pairing = pod.spec.containers.find(isPairing)
    if (!(await runInit(pod))) return
    if (harness !== undefined) entry.harness = await launchSvc(entry, harness, { [Compute.HarnessVariables.listen]: `127.0.0.1:${entry.harnessPort}` })
    if (pairing !== undefined) entry.pairing = await launchSvc(entry, pairing, { [Compute.PairingVariables.gateway]: `http://127.0.0.1:${entry.port}` })
    const env = await prepare(pod, container, harness === undefined ? undefined : entry.harnessPort)
    for (const dir of ["HOME", "OPENCLAW_STATE_DIR", "TMPDIR"]) if (env[dir] !== undefined) fs.mkdirSync(env[dir]!, { recursive: true })
    const log = fs.openSync(path.join(options.workDir, `${pod.metadata.name}.log`), "a")
    const child = spawn(runtime.node, Compute.gatewayArgv(runtime, entry.port).slice(1), { env, detached: true, stdio: ["ignore", log, log] })
    fs.closeSync(log)
    entry.child = child
    child.once("exit", () => {
      if (entry.child !== child || stopped) return
      entry.child = undefined
      entry.ready = false
      entry.restarts += 1
    })
  }

  const kill = (entry: Running) => {
    for (const child of [entry.child, entry.harness, entry.pairing]) {
      if (child?.pid !== undefined && child.exitCode === null) {
        try {
          process.kill(-child.pid, "SIGKILL")
        } catch {
          // already gone
        }
      }
    }
    entry.child = undefined
    entry.harness = undefined
    entry.pairing = undefined
  }

  const reportStatus = async (entry: Running) => {
    const { namespace, name } = entry.pod.metadata
    const current = (await send({ method: "GET", path: `/api/v1/namespaces/${namespace}/pods/${name}` })) as Record<string, unknown>
    const ready = entry.ready ? "True" : "False"
    await send({
      method: "PUT",
      path: `/api/v1/namespaces/${namespace}/pods/${name}/status`,
      body: {
        ...current,
        status: {
          phase: "Running",
          hostIP: "192.0.2.1",
          podIP: entry.ip,
          podIPs: [{ ip: entry.ip }],
          startTime: entry.startedAt,
          conditions: [
            { type: "Initialized", status: "True", lastTransitionTime: entry.startedAt },
            { type: "ContainersReady", status: ready, lastTransitionTime: now() },
            { type: "Ready", status: ready, lastTransitionTime: now() },
            { type: "PodScheduled", status: "True", lastTransitionTime: entry.startedAt }
          ],
          containerStatuses: entry.pod.spec.containers.map((container) => ({
            name: container.name,
            image: container.image,
            imageID: `test-node://${container.image}`,
            ready: entry.ready,
            started: true,
            restartCount: isSidecar(container) ? 0 : entry.restarts,
            state: { running: { startedAt: entry.startedAt } }
          }))
        }
      }
    })
  }

  const readyz = (port: number) =>
    fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(2000) }).then((response) => response.status === 200, () => false)

  const tick = async () => {
    const pods = ((await send({ method: "GET", path: "/api/v1/pods" })) as { items: Array<PodLike> }).items
    const seen = new Set<string>()
    for (const pod of pods) {
      const key = `${pod.metadata.namespace}/${pod.metadata.name}`
      if (!options.owns(pod.metadata.namespace)) continue
      if (pod.spec.nodeName === undefined) {
        await send({
          method: "POST",
          path: `/api/v1/namespaces/${pod.metadata.namespace}/pods/${pod.metadata.name}/binding`,
          body: { apiVersion: "v1", kind: "Binding", metadata: { name: pod.metadata.name }, target: { apiVersion: "v1", kind: "Node", name: options.name } }
        }).catch(() => undefined)
        continue
      }
      if (pod.spec.nodeName !== options.name) continue
      seen.add(key)
      let entry = running.get(key)
      if (pod.metadata.deletionTimestamp !== undefined) {
        if (entry !== undefined) kill(entry)
        running.delete(key)
        await send({ method: "DELETE", path: `/api/v1/namespaces/${pod.metadata.namespace}/pods/${pod.metadata.name}?gracePeriodSeconds=0` })
          .catch(() => undefined)
        continue
      }
      if (entry === undefined) {
        entry = {
          pod,
          port: await freePort(),
          harnessPort: await freePort(),
          ip: `192.0.2.${nextIp++}`,
          child: undefined,
          harness: undefined,
          pairing: undefined,
          ready: false,
          restarts: 0,
          startedAt: now()
        }
        running.set(key, entry)
        if (!(options.neverReady?.({ namespace: pod.metadata.namespace, labels: pod.metadata.labels ?? {} }) ?? false)) await launch(entry)
        await reportStatus(entry).catch(() => undefined)
        continue
      }
      const ready = entry.child !== undefined && (await readyz(entry.port))
      const status = pod.status as { conditions?: Array<{ type: string; status: string }>; containerStatuses?: Array<{ restartCount: number }> } | undefined
      const statusReady = status?.conditions?.some((condition) => condition.type === "Ready" && condition.status === "True") === true
      // Compared with what the Pod says, not with what this node last sent: a gateway that exits
      // while a report is being written is counted after that report was built.
      const statusRestarts = Math.max(0, ...(status?.containerStatuses ?? []).map((container) => container.restartCount))
      if (ready !== entry.ready || ready !== statusReady || statusRestarts !== entry.restarts) {
        entry.ready = ready
        await reportStatus(entry).catch(() => undefined)
      }
    }
    for (const [key, entry] of running) {
      if (!seen.has(key)) {
        kill(entry)
        running.delete(key)
      }
    }
  }

  const endpoints = (): ReadonlyArray<PodEndpoint> =>
    [...running.values()].flatMap((entry) =>
      entry.child === undefined ? [] : [{ namespace: entry.pod.metadata.namespace, labels: entry.pod.metadata.labels ?? {}, port: entry.port }]
    )
  const resolver = loopbackResolver(cluster, () => Promise.resolve(endpoints()))

  const loop = (async () => {
    while (!stopped) {
      await tick().catch(() => undefined)
      if (options.endpointsFile !== undefined) writePodEndpoints(options.endpointsFile, endpoints())
      await new Promise((resolve) => setTimeout(resolve, 500))
    }
  })()

  return {
    resolver,
    processes: () =>
      new Map([...running.values()].map((entry) => [
        entry.pod.metadata.name,
        { pid: entry.child?.pid, port: entry.port, ready: entry.ready, harnessPid: entry.harness?.pid, pairingPid: entry.pairing?.pid }
      ])),
    stop: async () => {
      stopped = true
      await loop
      for (const entry of running.values()) kill(entry)
      running.clear()
      await send({ method: "DELETE", path: `/api/v1/nodes/${options.name}` }).catch(() => undefined)
    }
  }
}
